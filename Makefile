# Build FFmpeg 9.0.2 with the project's LibTorch backend.
#   make            build ./ffmpeg, ./ffprobe and the API example
#                   build/dnn_torch_graph (configures with defaults first),
#                   in build/PROFILE (lean or full, as ./configure chose)
#   make check      FATE tests of the torch backend; last line "N passed, N failed"
#   make demo       run a shipped model on a generated clip, under build/demo/
#   make bench      throughput and memory against upstream and LibTorch alone
#   make series     our work as git format-patch patches on FFmpeg, in build/series/
#   make check-series  git am them on a fresh tree, patcheck, build, test
#                   (EACH=1: build every patch on its own too)
#                   UPSTREAM=master: both on upstream master instead, in
#                   build/series-master/ (the pinned snapshot, or
#                   MASTER_TREE=DIR, a master checkout)
# See README.md.

TOP   := $(CURDIR)
BUILD := $(TOP)/build

-include $(BUILD)/config.mk

# TREE is the prepared FFmpeg source (quilt edits happen there); each profile
# is built out of tree in OBJ, so lean and full objects never mix.
TREE     := $(BUILD)/ffmpeg-$(FFMPEG_VERSION)
OBJ      := $(BUILD)/$(PROFILE)
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
PATCHES  := $(shell sed -e 's/\#.*//' -e '/^ *$$/d' -e 's|^|patches/|' patches/series)
FATE_ENV := PATH="$(PATH)" CCACHE_NOHASHDIR=1
PKGCFG   := PKG_CONFIG_PATH="$(NVCODEC_PC)$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))"

.PHONY: all ffmpeg-build check check-gpu check-valgrind demo bench baseline clean distclean prepare FORCE
.PHONY: series series-base check-series

all: ffmpeg-build

# Unconfigured, "make" builds the full profile (what users get); the test,
# demo and bench goals build the lean one (only what they need).
AUTO_PROFILE := $(if $(filter-out all ffmpeg-build,$(or $(MAKECMDGOALS),all)),lean,full)

$(BUILD)/config.mk: configure
	@if [ -f $@ ]; then \
	    echo "configure changed: re-running ./configure $(CONFIGURE_ARGS)"; \
	    ./configure $(CONFIGURE_ARGS); \
	else \
	    echo "not configured yet: running ./configure --profile=$(AUTO_PROFILE)"; \
	    ./configure --profile=$(AUTO_PROFILE); \
	fi

$(TREE)/.patched: $(BUILD)/config.mk patches/series $(PATCHES) tools/prepare-tree.sh
	tools/prepare-tree.sh $(TREE) $(FFMPEG_TARBALL)
	@touch $@

prepare: $(TREE)/.patched
	@tools/prepare-tree.sh $(TREE) $(FFMPEG_TARBALL)

# FFmpeg's configure runs in OBJ, again only when the profile's flags or
# the patches change (so going back to a profile rebuilds nothing); when the
# flags change, OBJ's objects were built for other flags: OBJ is emptied.
$(OBJ)/ff-flags: FORCE
	@mkdir -p $(OBJ)
	@echo "$(FF_FLAGS)" | cmp -s - $@ || { \
	    [ ! -f $@ ] || { echo "make: the flags of the $(PROFILE) profile changed: emptying build/$(PROFILE)"; \
	                     rm -rf $(OBJ) && mkdir -p $(OBJ); }; \
	    echo "$(FF_FLAGS)" > $@; }

$(OBJ)/ffbuild/config.mak: $(OBJ)/ff-flags patches/series $(PATCHES) | prepare
	cd $(OBJ) && $(PKGCFG) $(TREE)/configure $(FF_FLAGS) > $(OBJ)/configure.log 2>&1 || \
	    { tail -n 20 $(OBJ)/configure.log; rm -f ffbuild/config.mak; \
	      echo "FFmpeg's configure failed: see build/$(PROFILE)/configure.log"; exit 1; }

# The libavfilter API example (doc/examples/dnn_torch_graph.c) is built by
# FFmpeg's own example rules, so it gets the programs' flags and libraries.
EXAMPLE := doc/examples/dnn_torch_graph

ffmpeg-build: prepare $(OBJ)/ffbuild/config.mak
	@echo "make: building the $(PROFILE) profile in build/$(PROFILE)$(if $(filter lean,$(PROFILE)), (./configure for the full one))"
	+$(FATE_ENV) $(MAKE) -C $(OBJ) -j$(JOBS) ffmpeg ffprobe $(EXAMPLE)
	@ln -sfn build/$(PROFILE)/ffmpeg ffmpeg
	@ln -sfn build/$(PROFILE)/ffprobe ffprobe
	@ln -sfn $(PROFILE)/$(EXAMPLE) $(BUILD)/dnn_torch_graph

# The series' FATE tests (tests/fate/dnn-torch.mak, on the samples in
# fate-suite/) run first with a PATH whose python3 and python fail: they
# must need no Python.  Then our own tests (tests/fate/dnn-torch-oracle.mak).
NOPY := $(BUILD)/no-python
SAMPLES_DIR := $(TOP)/fate-suite

$(NOPY)/python3:
	@mkdir -p $(NOPY)
	@printf '#!/bin/sh\necho "$$0 $$*: no Python in the series FATE tests" >&2\nexit 127\n' > $@
	@chmod +x $@
	@ln -sf python3 $(NOPY)/python

check: ffmpeg-build $(NOPY)/python3
	@rm -rf $(OBJ)/tests/data/fate/dnn-torch-* $(OBJ)/tests/data/fate/ffmpeg-reinit*
	@$(MAKE) -s -C $(OBJ) fate-dnn-torch-list DNNT_TOP=$(TOP) DNNT_MASTER=$(MASTER_TARBALL) \
	    TORCH_PYTHON=$(PYTHON)
	-+@PATH="$(NOPY):$(PATH)" CCACHE_NOHASHDIR=1 $(MAKE) -C $(OBJ) -k -j$(JOBS) \
	    fate-dnn-torch-samples SAMPLES=$(SAMPLES_DIR)
	-+@$(FATE_ENV) $(MAKE) -C $(OBJ) -k -j$(JOBS) fate-dnn-torch-oracle TORCH_PYTHON=$(PYTHON) \
	    DNNT_TOP=$(TOP) DNNT_TARBALL=$(FFMPEG_TARBALL) DNNT_MASTER=$(MASTER_TARBALL)
	@tools/fate-summary.sh $(OBJ) dnn-torch

check-gpu: ffmpeg-build
	@rm -rf $(OBJ)/tests/data/fate/dnn-torch-* $(OBJ)/tests/data/fate/ffmpeg-reinit*
	@$(MAKE) -s -C $(OBJ) fate-dnn-torch-list DNNT_TOP=$(TOP) DNNT_MASTER=$(MASTER_TARBALL) \
	    TORCH_PYTHON=$(PYTHON)
	-+@$(FATE_ENV) $(MAKE) -C $(OBJ) -k -j$(JOBS) fate-dnn-torch fate-ffmpeg-reinit fate-ffmpeg-reinit-drain \
	    SAMPLES=$(SAMPLES_DIR) TORCH_PYTHON=$(PYTHON) \
	    DNNT_TOP=$(TOP) DNNT_TARBALL=$(FFMPEG_TARBALL) DNNT_MASTER=$(MASTER_TARBALL)
	@tools/fate-summary.sh $(OBJ) dnn-torch > $(BUILD)/check-cpu.txt || true
	@cat $(BUILD)/check-cpu.txt
	@$(PYTHON) tests/dnn/gpu_suite.py --ffmpeg $(TOP)/ffmpeg --workdir $(BUILD)/gpu \
	    --prior $(BUILD)/check-cpu.txt

check-valgrind: ffmpeg-build
	@rm -rf $(OBJ)/tests/data/fate/dnn-torch-valgrind*
	@$(MAKE) -s -C $(OBJ) dnn-torch-valgrind-testlist
	-+@$(FATE_ENV) $(MAKE) -C $(OBJ) -k fate-dnn-torch-valgrind TORCH_PYTHON=$(PYTHON)
	@tools/fate-summary.sh $(OBJ) dnn-torch-valgrind

demo: ffmpeg-build
	@PYTHON=$(PYTHON) tools/demo.sh $(BUILD)/demo

# The bench's anchor: upstream FFmpeg from the same tarball, with the same
# LibTorch and flags, none of our patches; rebuilt only when its flags change.
# Upstream has no --enable-libtorch-cuda: link LibTorch's CUDA part by hand.
BASELINE       := $(BUILD)/baseline/ffmpeg-$(FFMPEG_VERSION)
TORCH_CUDA_LIBS := --extra-libs='-Wl,--push-state,--no-as-needed,-ltorch_cuda,-lc10_cuda,--pop-state'
BASELINE_FLAGS  := $(subst --enable-libtorch-cuda ,,$(FF_FLAGS)) \
                   $(if $(filter yes,$(TORCH_CUDA)),$(TORCH_CUDA_LIBS))

$(BUILD)/baseline/flags: FORCE
	@mkdir -p $(@D)
	@echo "$(BASELINE_FLAGS)" | cmp -s - $@ || echo "$(BASELINE_FLAGS)" > $@

$(BASELINE)/ffmpeg: $(BUILD)/baseline/flags
	tools/prepare-tree.sh $(BASELINE) $(FFMPEG_TARBALL) pristine
	cd $(BASELINE) && $(PKGCFG) ./configure $(BASELINE_FLAGS) > $(BUILD)/baseline/configure.log 2>&1 || \
	    { tail -n 20 $(BUILD)/baseline/configure.log; \
	      echo "upstream's configure failed: see build/baseline/configure.log"; exit 1; }
	+$(FATE_ENV) $(MAKE) -C $(BASELINE) -j$(JOBS) ffmpeg
	@touch $@

# The second anchor: upstream master (MASTER_TARBALL, from ./configure;
# empty without the snapshot), the same flags.  A failed build leaves no
# binary: the bench says so in the master column and goes on.
MASTER_ANCHOR := $(BUILD)/baseline/ffmpeg-master
MASTER_BIN    := $(if $(MASTER_TARBALL),$(MASTER_ANCHOR)/ffmpeg)

$(MASTER_ANCHOR)/ffmpeg: $(BUILD)/baseline/flags
	tools/prepare-tree.sh $(MASTER_ANCHOR) $(MASTER_TARBALL) pristine
	cd $(MASTER_ANCHOR) && $(PKGCFG) ./configure $(BASELINE_FLAGS) > $(BUILD)/baseline/master-configure.log 2>&1 && \
	    $(FATE_ENV) $(MAKE) -C $(MASTER_ANCHOR) -j$(JOBS) ffmpeg > $(BUILD)/baseline/master-build.log 2>&1 || \
	    { rm -f $@; echo "upstream master did not build (build/baseline/master-*.log): no master column"; }
	@[ ! -f $@ ] || touch $@

baseline: $(BASELINE)/ffmpeg $(MASTER_BIN)

bench: ffmpeg-build $(BASELINE)/ffmpeg $(MASTER_BIN)
	@PYTHON=$(PYTHON) LIBTORCH=$(LIBTORCH) TORCH_CUDA=$(TORCH_CUDA) \
	    BASELINE=$(BASELINE)/ffmpeg MASTER=$(MASTER_BIN) tools/bench.sh $(BUILD)/bench

# The patch series for upstream: commits listed in tools/series.txt, on
# FFmpeg 9.0.2 or, with UPSTREAM=master, on upstream master: the pinned
# snapshot (MASTER_TARBALL, hash checked by ./configure) or a developer's
# master checkout MASTER_TREE=DIR (its HEAD; a warning when it is not
# MASTER_COMMIT).  Master's prepared tree is build/ffmpeg-master, made with
# patches/master/'s variants (tools/upstream.sh).
UPSTREAM ?= 9.0.2
ifeq ($(UPSTREAM),master)
S_BASE := $(or $(MASTER_TREE),$(MASTER_TARBALL))
S_TREE := $(BUILD)/ffmpeg-master
S_DIR  := $(BUILD)/series-master
S_ENV  := UPSTREAM=master MASTER_COMMIT=$(MASTER_COMMIT) BASE=$(S_BASE)
else
S_BASE := $(FFMPEG_TARBALL)
S_TREE := $(TREE)
S_DIR  := $(BUILD)/series
S_ENV  :=
endif

series-base:
	@[ -n "$(S_BASE)" ] || { echo "make series UPSTREAM=master: no master snapshot" \
	    "(./configure --master-tarball=FILE) and no MASTER_TREE=DIR"; exit 1; }
	@[ "$(UPSTREAM)" != master ] || $(S_ENV) tools/prepare-tree.sh $(S_TREE) $(S_BASE)

series: $(if $(filter master,$(UPSTREAM)),series-base,prepare)
	@$(S_ENV) SIGNOFF=$(SIGNOFF) tools/make-series.sh $(S_BASE) $(S_TREE) $(S_DIR)-work $(S_DIR)

check-series: series $(NOPY)/python3
	@$(S_ENV) JOBS=$(JOBS) tools/check-series.sh $(S_DIR) $(S_DIR)-check $(if $(EACH),--each)

clean:
	-[ -f $(OBJ)/ffbuild/config.mak ] && $(MAKE) -C $(OBJ) clean
	rm -f ffmpeg ffprobe $(BUILD)/dnn_torch_graph

distclean:
	rm -rf build ffmpeg ffprobe
