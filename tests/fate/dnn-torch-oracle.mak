# Our own tests of the LibTorch DNN backend, beside the FATE tests of the
# series (tests/fate/dnn-torch.mak); not part of the series, as they need
# Python.
#
# Models come from tests/dnn/models.py (fixed seeds); references are computed
# independently by PyTorch (tests/dnn/oracle.py) on the very frames ffmpeg
# reads, or by another FFmpeg filter.  TORCH_PYTHON names a Python with torch.

TORCH_PYTHON ?= python3
DNNT      = tests/data/dnn-torch
DNNT_PY   = $(TORCH_PYTHON) $(SRC_PATH)/tests/dnn
DNNT_FF   = ./ffmpeg$(PROGSSUF)$(EXESUF) -nostdin -hide_banner -v error
# aoti=1: the tests of AOTInductor packages take this too (the refusal of a
# package without it is fate-dnn-torch-err-pt2-no-aoti*)
DNNT_OPT  = dnn_processing=dnn_backend=torch:aoti=1:model=$(TARGET_PATH)/$(DNNT)
DNNT_COMMA := ,

$(DNNT)/models.stamp: $(SRC_PATH)/tests/dnn/models.py
	@mkdir -p $(DNNT)
	$(DNNT_PY)/models.py $(DNNT)
	@touch $@

# Oracle test: raw frames of testsrc2 through the model, against PyTorch.
# The frames are cut from a 96x64 testsrc2 in RGB, so that odd sizes stay odd.
# $(1) test name, $(2) model, $(3) pixfmt, $(4) width, $(5) height (at most
# 96x64), $(6) extra filter options, $(7) tiny_psnr unit, $(8) allowed MAXDIFF,
# $(9) the dtype the oracle casts the model to (default: its weights')
define DNNT_ORACLE
$(DNNT)/$(1).in: ffmpeg$(PROGSSUF)$(EXESUF)
	@mkdir -p $(DNNT)
	$(DNNT_FF) -f lavfi -i testsrc2=s=96x64:r=5 -frames:v 3 \
	    -vf format=rgb24,crop=$(4):$(5):0:0,format=$(3) -f rawvideo -y $$@
$(DNNT)/$(1).ref: $(DNNT)/$(1).in $(DNNT)/models.stamp $(SRC_PATH)/tests/dnn/oracle.py
	$(DNNT_PY)/oracle.py $(DNNT)/$(2).pt $(3) $(4) $(5) $$< $$@ $(9)
fate-dnn-torch-$(1): $(DNNT)/$(1).ref
fate-dnn-torch-$(1): CMD = ffmpeg -f rawvideo -pix_fmt $(3) -s $(4)x$(5) \
    -i $(TARGET_PATH)/$(DNNT)/$(1).in -vf $(DNNT_OPT)/$(2).pt$(6) -f rawvideo -
fate-dnn-torch-$(1): CMP = oneoff
fate-dnn-torch-$(1): CMP_UNIT = $(7)
fate-dnn-torch-$(1): FUZZ = $(8)
fate-dnn-torch-$(1): REF = $(DNNT)/$(1).ref
FATE_DNN_TORCH += fate-dnn-torch-$(1)
endef

$(eval $(call DNNT_ORACLE,conv-rgb24,conv,rgb24,96,64,,u8,1))
$(eval $(call DNNT_ORACLE,conv-bgr24,conv,bgr24,96,64,,u8,1))
$(eval $(call DNNT_ORACLE,sr2-rgb24,sr2,rgb24,64,48,,u8,1))

# Every other format dnn_processing offers, through the one-channel model.
# 91x51 gives padded lines and odd chroma sizes; chroma must come out as it
# went in.  grayf32 is compared as floats: MAXDIFF is in units of 2^-24, so
# the tolerance 256 is 2^-16 (about 1.5e-5).
$(eval $(call DNNT_ORACLE,conv1-gray8,conv1,gray8,91,51,,u8,1))
$(eval $(call DNNT_ORACLE,conv1-grayf32,conv1,grayf32,91,51,,f32,256))
$(eval $(call DNNT_ORACLE,conv1-yuv420p,conv1,yuv420p,91,51,,u8,1))
$(eval $(call DNNT_ORACLE,conv1-yuv422p,conv1,yuv422p,91,51,,u8,1))
$(eval $(call DNNT_ORACLE,conv1-yuv444p,conv1,yuv444p,91,51,,u8,1))
$(eval $(call DNNT_ORACLE,conv1-yuv410p,conv1,yuv410p,91,51,,u8,1))
$(eval $(call DNNT_ORACLE,conv1-yuv411p,conv1,yuv411p,91,51,,u8,1))
$(eval $(call DNNT_ORACLE,conv1-nv12,conv1,nv12,91,51,,u8,1))

# Output types and range: half and bfloat16 output widened (the oracle
# widens the same values; 2 LSB allowed), values outside [0, 1] clamped.
$(eval $(call DNNT_ORACLE,half-rgb24,conv_half,rgb24,96,64,,u8,2))
$(eval $(call DNNT_ORACLE,bf16-rgb24,conv_bf16,rgb24,96,64,,u8,2))
$(eval $(call DNNT_ORACLE,clamp-rgb24,overshoot,rgb24,96,64,,u8,1))

# The output is converted where the forward ran, on its intra-op threads:
# in one pass of the backend's own with one thread (async=1 here: a worker
# per core), by LibTorch's vectorized operations with more (async=0: the
# filter thread, all cores).  Both against the same oracles: the clamped
# range, BGR order, gray, half and bfloat16 output, and a channels-last
# bfloat16 output (the compact SR net's pixel shuffle).
$(eval $(call DNNT_ORACLE,clamp-rgb24-sync,overshoot,rgb24,96,64,:async=0,u8,1))
$(eval $(call DNNT_ORACLE,conv-bgr24-sync,conv,bgr24,96,64,:async=0,u8,1))
$(eval $(call DNNT_ORACLE,conv1-gray8-sync,conv1,gray8,91,51,:async=0,u8,1))
$(eval $(call DNNT_ORACLE,half-rgb24-sync,conv_half,rgb24,96,64,:async=0,u8,2))
$(eval $(call DNNT_ORACLE,bf16-rgb24-sync,conv_bf16,rgb24,96,64,:async=0,u8,2))
$(eval $(call DNNT_ORACLE,compact-bf16-bgr24-sync,compact,bgr24,48,32,:precision=bf16:async=0,u8,2,bf16))
$(DNNT)/compact-bf16-bgr24-sync.ref: $(DNNT)/compact.pt

# Precision and layout on the CPU.  precision=fp32, channels_last=1 (an
# NHWC input, channels-last weights, the default) and channels_last=0
# (contiguous NCHW) must give what the float32 oracle gives; weights saved in bfloat16 run in bfloat16 by default
# (precision=auto), fp16 casts the float32 model: against PyTorch running
# the same model in the same dtype on the same frames, 2 LSB.
$(eval $(call DNNT_ORACLE,fp32-rgb24,conv,rgb24,96,64,:precision=fp32,u8,1))
$(eval $(call DNNT_ORACLE,nhwc-bgr24,conv,bgr24,96,64,:channels_last=1,u8,1))
$(eval $(call DNNT_ORACLE,nchw-bgr24,conv,bgr24,96,64,:channels_last=0,u8,1))
$(eval $(call DNNT_ORACLE,wbf16-rgb24,conv_w_bf16,rgb24,96,64,,u8,2))
$(eval $(call DNNT_ORACLE,bf16-cast-gray8,conv1,gray8,91,51,:precision=bf16,u8,2,bf16))
$(eval $(call DNNT_ORACLE,fp16-cast-rgb24,conv,rgb24,96,64,:precision=fp16,u8,2,fp16))

# bf16 on the CPU against the float32 oracle, bound stated as PSNR: at
# least 40 dB (tiny_psnr's stddev at most 2.55 of 255), for the conv test
# model and for a compact SR net of Real-ESRGAN's published shape
# (SRVGGNetCompact, 64 features, 16 conv+PReLU, x4) with seeded random
# weights.  Measured on the 2-core EPYC: conv 60.4 dB, compact 62.9 dB.
$(DNNT)/compact.pt: $(SRC_PATH)/tests/dnn/models.py
	@mkdir -p $(DNNT)
	$(DNNT_PY)/models.py $(DNNT) compact
# $(1) test name, $(2) model, $(3) width, $(4) height
define DNNT_BF16_PSNR
$(eval $(call DNNT_ORACLE,$(1),$(2),rgb24,$(3),$(4),:precision=bf16,u8,0))
$(DNNT)/$(1).ref: $(DNNT)/$(2).pt
fate-dnn-torch-$(1): CMP = stddev
fate-dnn-torch-$(1): CMP_TARGET = 0
fate-dnn-torch-$(1): FUZZ = 2.55
endef
$(eval $(call DNNT_BF16_PSNR,bf16-psnr-conv-rgb24,conv,96,64))
$(eval $(call DNNT_BF16_PSNR,bf16-psnr-compact-rgb24,compact,48,32))

# bf16 on the CPU: the message at the first frame follows the CPU's units (the kernel's
# /proc/cpuinfo flags, an oracle apart from LibTorch's cpuinfo): with
# avx512_bf16 or amx_bf16 a verbose line names them and nothing claims
# slowness; without, a warning says the CPU has no bf16 units.
# A LibTorch before 2.11 cannot tell the units (the Python's torch stands
# for it: configure takes both from one install unless told otherwise).
DNNT_CPU_BF16 := $(shell grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo 2>/dev/null && echo yes)
DNNT_TORCH_2_11 := $(shell $(TORCH_PYTHON) -c "import torch; v = torch.__version__.split('.'); \
    print('yes' if (int(v[0]), int(v[1])) >= (2, 11) else '')" 2>/dev/null)
DNNT_BF16_MSG = $(if $(DNNT_TORCH_2_11),$(DNNT_BF16_UNITS_MSG),"runs in bf16 on the CPU; this LibTorch does not say whether the CPU has units for it")
DNNT_BF16_UNITS_MSG = $(if $(DNNT_CPU_BF16),"runs in bf16 on the CPU$(DNNT_COMMA) which has units for it .[a-z0-9_$(DNNT_COMMA) ]*bf16" "!often slower","which has no bf16 units: correct$(DNNT_COMMA) but often slower")
fate-dnn-torch-bf16-cpu-message: $(DNNT)/models.stamp
fate-dnn-torch-bf16-cpu-message: CMD = $(DNNT_PY)/expect_output.py $(DNNT_BF16_MSG) -- \
    $(TARGET_PATH)/ffmpeg$(PROGSSUF)$(EXESUF) -nostdin -hide_banner -v verbose \
    -f lavfi -i testsrc2=s=32x24:r=5 -frames:v 2 -vf format=rgb24,$(DNNT_OPT)/conv.pt:precision=bf16 -f null -
fate-dnn-torch-bf16-cpu-message: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-bf16-cpu-message

# Two torch filters in one graph, each with its own precision, threads and
# requests: each keeps its own (no process-wide LibTorch setting decides),
# its frames against its own oracle (bf16 above, fp32 below, vstack), and
# the verbose log says each one's dtype (on this model the two oracles
# differ by 1 at most, so the log is what tells the precisions apart).
$(DNNT)/two-filters-bf16.ref: $(DNNT)/fp32-rgb24.in $(DNNT)/models.stamp $(SRC_PATH)/tests/dnn/oracle.py
	$(DNNT_PY)/oracle.py $(DNNT)/conv.pt rgb24 96 64 $< $@ bf16
$(DNNT)/two-filters.ref: $(DNNT)/two-filters-bf16.ref $(DNNT)/fp32-rgb24.ref
	$(DNNT_FF) -f rawvideo -pix_fmt rgb24 -s 96x64 -i $(DNNT)/two-filters-bf16.ref \
	    -f rawvideo -pix_fmt rgb24 -s 96x64 -i $(DNNT)/fp32-rgb24.ref \
	    -filter_complex vstack -f rawvideo -y $@
DNNT_TWO_FILTERS = -filter_complex_threads 8 -f rawvideo -pix_fmt rgb24 -s 96x64 -i $(TARGET_PATH)/$(DNNT)/fp32-rgb24.in \
    -filter_complex "split[a][b];[a]$(DNNT_OPT)/conv.pt:precision=bf16:threads=1[x];[b]$(DNNT_OPT)/conv.pt:precision=fp32:threads=6:nireq=3[y];[x][y]vstack"
fate-dnn-torch-two-filters: $(DNNT)/two-filters.ref
fate-dnn-torch-two-filters: CMD = ffmpeg $(DNNT_TWO_FILTERS) -f rawvideo -
fate-dnn-torch-two-filters: CMP = oneoff
fate-dnn-torch-two-filters: CMP_UNIT = u8
fate-dnn-torch-two-filters: FUZZ = 2
fate-dnn-torch-two-filters: REF = $(DNNT)/two-filters.ref
fate-dnn-torch-two-filters-log: $(DNNT)/fp32-rgb24.in
fate-dnn-torch-two-filters-log: CMD = $(DNNT_PY)/expect_output.py \
    "model .*conv.pt. on cpu in bf16, channels-last" "model .*conv.pt. on cpu in fp32, channels-last" \
    "async, [0-9]+ requests side by side, batch size 1, intra-op threads: 1$$" \
    "async, 3 requests side by side, batch size 1, intra-op threads: 2$$" -- \
    $(TARGET_PATH)/ffmpeg$(PROGSSUF)$(EXESUF) -nostdin -hide_banner -v verbose $(DNNT_TWO_FILTERS) -f null -
fate-dnn-torch-two-filters-log: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-two-filters fate-dnn-torch-two-filters-log

# A model with no parameters (1 - x) against FFmpeg's negate: exact.
$(DNNT)/invert-rgb24.ref: $(DNNT)/conv-rgb24.in
	$(DNNT_FF) -f rawvideo -pix_fmt rgb24 -s 96x64 -i $< -vf negate \
	    -f rawvideo -y $@
fate-dnn-torch-invert-vs-negate-rgb24: $(DNNT)/invert-rgb24.ref $(DNNT)/models.stamp
fate-dnn-torch-invert-vs-negate-rgb24: CMD = ffmpeg -f rawvideo -pix_fmt rgb24 -s 96x64 \
    -i $(TARGET_PATH)/$(DNNT)/conv-rgb24.in -vf $(DNNT_OPT)/invert.pt -f rawvideo -
fate-dnn-torch-invert-vs-negate-rgb24: CMP = oneoff
fate-dnn-torch-invert-vs-negate-rgb24: FUZZ = 0
fate-dnn-torch-invert-vs-negate-rgb24: REF = $(DNNT)/invert-rgb24.ref
FATE_DNN_TORCH += fate-dnn-torch-invert-vs-negate-rgb24

# Frames stored bottom-up (negative linesizes, as vflip hands them out) on
# both sides of the filter, against the same model on the frames flipped
# beforehand and flipped back afterwards, all stored top-down: the same
# bytes.  LibTorch takes no negative strides: before the fix the output of
# rgb24 ended the process (std::terminate) when the conversion ran on
# LibTorch's threads (async=0 on a machine of several cores).
# $(1) name, $(2) model, $(3) the input of DNNT_ORACLE's test $(3) (its
# pixfmt and size: $(4), $(5)x$(6)), $(7) filter options, $(8) unit
define DNNT_VFLIP
$(DNNT)/vflip-$(1).ref: $(DNNT)/$(3).in $(DNNT)/models.stamp
	$(DNNT_FF) -f rawvideo -pix_fmt $(4) -s $(5)x$(6) -i $$< -vf vflip -f rawvideo -y $$@.a
	$(DNNT_FF) -f rawvideo -pix_fmt $(4) -s $(5)x$(6) -i $$@.a \
	    -vf $(DNNT_OPT)/$(2).pt$(7) -f rawvideo -y $$@.b
	$(DNNT_FF) -f rawvideo -pix_fmt $(4) -s $(5)x$(6) -i $$@.b -vf vflip -f rawvideo -y $$@
fate-dnn-torch-vflip-$(1): $(DNNT)/vflip-$(1).ref
fate-dnn-torch-vflip-$(1): CMD = ffmpeg -f rawvideo -pix_fmt $(4) -s $(5)x$(6) \
    -i $(TARGET_PATH)/$(DNNT)/$(3).in -vf vflip,$(DNNT_OPT)/$(2).pt$(7),vflip -f rawvideo -
fate-dnn-torch-vflip-$(1): CMP = oneoff
fate-dnn-torch-vflip-$(1): CMP_UNIT = $(8)
fate-dnn-torch-vflip-$(1): FUZZ = 0
fate-dnn-torch-vflip-$(1): REF = $(DNNT)/vflip-$(1).ref
FATE_DNN_TORCH += fate-dnn-torch-vflip-$(1)
endef
$(eval $(call DNNT_VFLIP,rgb24,conv,conv-rgb24,rgb24,96,64,,u8))
$(eval $(call DNNT_VFLIP,rgb24-sync,conv,conv-rgb24,rgb24,96,64,:async=0,u8))
$(eval $(call DNNT_VFLIP,bgr24-sync,conv,conv-bgr24,bgr24,96,64,:async=0,u8))
$(eval $(call DNNT_VFLIP,gray8-sync,conv1,conv1-gray8,gray8,91,51,:async=0,u8))
$(eval $(call DNNT_VFLIP,grayf32,conv1,conv1-grayf32,grayf32,91,51,,f32))
$(eval $(call DNNT_VFLIP,yuv420p-sync,conv1,conv1-yuv420p,yuv420p,91,51,:async=0,u8))

# A stream that changes size twice: 5 frames of 64x48, 5 of 80x56, 5 of
# 64x48, cut from one testsrc2 so that no two frames are alike.  Each part
# is a raw file; the stream is read two ways: PNGs through image2, and
# three NUT clips of PNG frames joined by the concat demuxer.
#
# ffmpeg builds a new filter graph at each change; with -reinit_drain 1
# (patches/fftools-ffmpeg_filter-drain-on-reinit.patch; off by default, as
# in upstream's ffmpeg) it drains the old one first, so every frame comes
# out: sync output against the oracle (all 15 frames), and async with 1,
# 2, 4 and 8 requests (on the CPU as many forwards side by side, ending in
# any order) and with the filter's default options must give the same
# framecrc as sync.  With -reinit_filter 0 the graph is kept, its output
# link keeps the first size, and the model's output for the second size is
# a one-line error (DNNT_RESIZE_KEPT, below).
DNNT_DRAIN         = -reinit_drain 1
DNNT_RESIZE_VF     = format=rgb24,$(DNNT_OPT)/conv.pt
DNNT_RESIZE_png    = -framerate 5 -i $(TARGET_PATH)/$(DNNT)/resize/%03d.png \
    -vf $(DNNT_RESIZE_VF)
DNNT_RESIZE_reinit = $(DNNT_DRAIN) $(DNNT_RESIZE_png)
DNNT_RESIZE_concat = $(DNNT_DRAIN) -f concat -i $(TARGET_PATH)/$(DNNT)/resize/clips.ffconcat \
    -vf $(DNNT_RESIZE_VF)
DNNT_RESIZE_inline = -reinit_filter 0 $(DNNT_RESIZE_png)

# $(1) part, $(2) size, $(3) its first frame in testsrc2, $(4) pixfmt
define DNNT_RESIZE_PART
$(DNNT)/resize-$(1).in: ffmpeg$(PROGSSUF)$(EXESUF)
	@mkdir -p $(DNNT)
	$(DNNT_FF) -f lavfi -i testsrc2=s=$(2):r=5 -frames:v 5 \
	    -vf format=rgb24,trim=start_frame=$(3),format=$(4) -f rawvideo -y $$@
endef
$(eval $(call DNNT_RESIZE_PART,a,64x48,0,rgb24))
$(eval $(call DNNT_RESIZE_PART,b,80x56,5,rgb24))
$(eval $(call DNNT_RESIZE_PART,c,64x48,10,rgb24))
$(eval $(call DNNT_RESIZE_PART,gray,64x48,5,gray))

# Recipe lines: part $(2) (size $(3), pixfmt $(4)) into directory $(1), as
# PNGs numbered from $(5) and as a NUT clip added to the concat list.
define DNNT_PART_TO_CLIPS
$(DNNT_FF) -f rawvideo -pix_fmt $(4) -s $(3) -framerate 5 \
    -i $(DNNT)/resize-$(2).in -start_number $(5) $(1)/%03d.png
$(DNNT_FF) -f rawvideo -pix_fmt $(4) -s $(3) -framerate 5 \
    -i $(DNNT)/resize-$(2).in -c:v png $(1)/$(2).nut
printf 'file %s.nut\nduration 1\n' $(2) >> $(1)/clips.ffconcat
endef

$(DNNT)/resize/stamp: $(DNNT)/resize-a.in $(DNNT)/resize-b.in $(DNNT)/resize-c.in
	@rm -rf $(DNNT)/resize && mkdir -p $(DNNT)/resize
	$(call DNNT_PART_TO_CLIPS,$(DNNT)/resize,a,64x48,rgb24,1)
	$(call DNNT_PART_TO_CLIPS,$(DNNT)/resize,b,80x56,rgb24,6)
	$(call DNNT_PART_TO_CLIPS,$(DNNT)/resize,c,64x48,rgb24,11)
	@touch $@
$(DNNT)/resize.ref: $(DNNT)/resize/stamp $(DNNT)/models.stamp $(SRC_PATH)/tests/dnn/oracle.py
	$(DNNT_PY)/oracle.py $(DNNT)/conv.pt rgb24 64 48 $(DNNT)/resize-a.in $@.a
	$(DNNT_PY)/oracle.py $(DNNT)/conv.pt rgb24 80 56 $(DNNT)/resize-b.in $@.b
	$(DNNT_PY)/oracle.py $(DNNT)/conv.pt rgb24 64 48 $(DNNT)/resize-c.in $@.c
	cat $@.a $@.b $@.c > $@
	@rm -f $@.a $@.b $@.c

# $(1) test name, $(2) ffmpeg options up to the filter's options, $(3) what
# follows them, $(4) reference: sync against the reference, and the sync
# framecrc that the async cases must give
define DNNT_RESIZE_ORACLE
fate-dnn-torch-$(1)-sync: $(DNNT)/$(4)
fate-dnn-torch-$(1)-sync: CMD = ffmpeg $(2):async=0$(3) -noautoscale -f rawvideo -
fate-dnn-torch-$(1)-sync: CMP = oneoff
fate-dnn-torch-$(1)-sync: FUZZ = 1
fate-dnn-torch-$(1)-sync: REF = $(DNNT)/$(4)
FATE_DNN_TORCH += fate-dnn-torch-$(1)-sync
$(DNNT)/$(1)-sync.framecrc: $(DNNT)/$(4)
	$(DNNT_FF) -nostats -noauto_conversion_filters $(2):async=0$(3) \
	    -noautoscale -bitexact -f framecrc -y $$@
endef

# $(1) test name, $(2) and $(3) as above, $(4) name of the case, $(5) the
# filter's options for it
define DNNT_RESIZE_ASYNC
fate-dnn-torch-$(1)-$(4): $(DNNT)/$(1)-sync.framecrc
fate-dnn-torch-$(1)-$(4): CMD = framecrc $(2)$(5)$(3) -noautoscale
fate-dnn-torch-$(1)-$(4): REF = $(DNNT)/$(1)-sync.framecrc
FATE_DNN_TORCH += fate-dnn-torch-$(1)-$(4)
endef

# $(1) test name, $(2) and $(3) as above, $(4) reference, $(5) with a case
# of default options or not
define DNNT_RESIZE_TESTS
$(eval $(call DNNT_RESIZE_ORACLE,$(1),$(2),$(3),$(4)))
$(foreach n,1 2 4 8,$(eval $(call DNNT_RESIZE_ASYNC,$(1),$(2),$(3),async-nireq$(n),:async=1:nireq=$(n))))
$(if $(5),$(eval $(call DNNT_RESIZE_ASYNC,$(1),$(2),$(3),default,)))
endef

$(eval $(call DNNT_RESIZE_TESTS,resize-reinit,$(DNNT_RESIZE_reinit),,resize.ref,default))
$(eval $(call DNNT_RESIZE_TESTS,resize-concat,$(DNNT_RESIZE_concat),,resize.ref,default))
# a thread count of the user's (the generic threads option: 1 for each of 3)
$(eval $(call DNNT_RESIZE_ASYNC,resize-reinit,$(DNNT_RESIZE_reinit),,async-nireq3-threads3,:async=1:nireq=3:threads=3))

# A kept graph (-reinit_filter 0): output frames have the output link's
# size, so the model's 80x56 output for the second part is one line at
# error level and a non-zero exit, sync, async and in batches.
# $(1) test name, $(2) input and filter, $(3) options
define DNNT_RESIZE_KEPT
fate-dnn-torch-err-$(1): $(DNNT)/resize/stamp $(DNNT)/resize-gray/stamp
fate-dnn-torch-err-$(1): CMD = $(DNNT_PY)/expect_error.py --one-line \
    "model output is 80x56 but the filter.s output is 64x48: the input changed size" \
    $(TARGET_PATH)/$(DNNT_FF) $(2)$(3) -f null -
fate-dnn-torch-err-$(1): CMP = null
FATE_DNN_TORCH += fate-dnn-torch-err-$(1)
endef

# batch_size 3 (frames per forward) on 15 frames whose size changes after
# 5 and 10: a partly filled batch goes at each size change (inline) or at
# each drain (reinit) and at the end; sync, and async with one and two
# batches of requests, identical to sync without batches.
# $(1) test name, $(2) and $(3) as for DNNT_RESIZE_ASYNC
define DNNT_BATCH_TESTS
$(eval $(call DNNT_RESIZE_ASYNC,$(1),$(2),$(3),batch3-sync,:async=0:batch_size=3))
$(eval $(call DNNT_RESIZE_ASYNC,$(1),$(2),$(3),batch3-nireq3,:async=1:nireq=3:batch_size=3))
$(eval $(call DNNT_RESIZE_ASYNC,$(1),$(2),$(3),batch3-nireq6,:async=1:nireq=6:batch_size=3))
endef
$(eval $(call DNNT_BATCH_TESTS,resize-reinit,$(DNNT_RESIZE_reinit),))
# nireq below batch_size is raised to it, with a warning: the same frames
$(eval $(call DNNT_RESIZE_ASYNC,resize-reinit,$(DNNT_RESIZE_reinit),,batch3-nireq2,:async=1:nireq=2:batch_size=3))
fate-dnn-torch-batch-nireq-raised: $(DNNT)/models.stamp
fate-dnn-torch-batch-nireq-raised: CMD = $(DNNT_PY)/expect_output.py \
    "nireq 2 is less than batch_size 3: 3 requests, one per frame of a batch$$" -- \
    $(TARGET_PATH)/ffmpeg$(PROGSSUF)$(EXESUF) -nostdin -hide_banner -v warning -f lavfi -i testsrc2=s=32x24:r=5 -frames:v 3 \
    -vf format=rgb24,$(DNNT_OPT)/conv.pt:nireq=2:batch_size=3 -f null -
fate-dnn-torch-batch-nireq-raised: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-batch-nireq-raised

# The same stream in gray8 through the one-channel model.
$(eval $(call DNNT_RESIZE_PART,gray-a,64x48,0,gray))
$(eval $(call DNNT_RESIZE_PART,gray-b,80x56,5,gray))
$(eval $(call DNNT_RESIZE_PART,gray-c,64x48,10,gray))
$(DNNT)/resize-gray/stamp: $(DNNT)/resize-gray-a.in $(DNNT)/resize-gray-b.in $(DNNT)/resize-gray-c.in
	@rm -rf $(DNNT)/resize-gray && mkdir -p $(DNNT)/resize-gray
	$(call DNNT_PART_TO_CLIPS,$(DNNT)/resize-gray,gray-a,64x48,gray,1)
	$(call DNNT_PART_TO_CLIPS,$(DNNT)/resize-gray,gray-b,80x56,gray,6)
	$(call DNNT_PART_TO_CLIPS,$(DNNT)/resize-gray,gray-c,64x48,gray,11)
	@touch $@
$(DNNT)/resize-gray.ref: $(DNNT)/resize-gray/stamp $(DNNT)/models.stamp $(SRC_PATH)/tests/dnn/oracle.py
	$(DNNT_PY)/oracle.py $(DNNT)/conv1.pt gray8 64 48 $(DNNT)/resize-gray-a.in $@.a
	$(DNNT_PY)/oracle.py $(DNNT)/conv1.pt gray8 80 56 $(DNNT)/resize-gray-b.in $@.b
	$(DNNT_PY)/oracle.py $(DNNT)/conv1.pt gray8 64 48 $(DNNT)/resize-gray-c.in $@.c
	cat $@.a $@.b $@.c > $@
	@rm -f $@.a $@.b $@.c
DNNT_RESIZE_gray_png    = -framerate 5 -i $(TARGET_PATH)/$(DNNT)/resize-gray/%03d.png \
    -vf format=gray,$(DNNT_OPT)/conv1.pt
DNNT_RESIZE_gray_reinit = $(DNNT_DRAIN) $(DNNT_RESIZE_gray_png)
DNNT_RESIZE_gray_inline = -reinit_filter 0 $(DNNT_RESIZE_gray_png)
$(eval $(call DNNT_RESIZE_TESTS,resize-gray-reinit,$(DNNT_RESIZE_gray_reinit),,resize-gray.ref,default))
$(eval $(call DNNT_BATCH_TESTS,resize-gray-reinit,$(DNNT_RESIZE_gray_reinit),))
$(eval $(call DNNT_RESIZE_KEPT,resize-kept,$(DNNT_RESIZE_inline),:async=0))
$(eval $(call DNNT_RESIZE_KEPT,resize-kept-async,$(DNNT_RESIZE_inline),:async=1:nireq=2))
$(eval $(call DNNT_RESIZE_KEPT,resize-kept-batch3,$(DNNT_RESIZE_inline),:async=1:nireq=6:batch_size=3))
$(eval $(call DNNT_RESIZE_KEPT,resize-gray-kept,$(DNNT_RESIZE_gray_inline),:async=0))

# A stream that changes pixel format twice (PNGs of 64x48: rgb24, gray8,
# rgb24) through the invert model (1 - x, any number of channels): the
# model gets the gray8 frames as they are and scale turns its output into
# rgb24.  Sync against the oracle, async against sync, as above.
$(DNNT)/pixfmt/stamp: $(DNNT)/resize-a.in $(DNNT)/resize-gray.in $(DNNT)/resize-c.in
	@rm -rf $(DNNT)/pixfmt && mkdir -p $(DNNT)/pixfmt
	$(call DNNT_PART_TO_CLIPS,$(DNNT)/pixfmt,a,64x48,rgb24,1)
	$(call DNNT_PART_TO_CLIPS,$(DNNT)/pixfmt,gray,64x48,gray,6)
	$(call DNNT_PART_TO_CLIPS,$(DNNT)/pixfmt,c,64x48,rgb24,11)
	@touch $@
$(DNNT)/pixfmt.ref: $(DNNT)/pixfmt/stamp $(DNNT)/models.stamp $(SRC_PATH)/tests/dnn/oracle.py
	$(DNNT_PY)/oracle.py $(DNNT)/invert.pt rgb24 64 48 $(DNNT)/resize-a.in $@.a
	$(DNNT_PY)/oracle.py $(DNNT)/invert.pt gray8 64 48 $(DNNT)/resize-gray.in $@.g
	$(DNNT_FF) -f rawvideo -pix_fmt gray -s 64x48 -i $@.g -vf scale,format=rgb24 \
	    -f rawvideo -y $@.b
	$(DNNT_PY)/oracle.py $(DNNT)/invert.pt rgb24 64 48 $(DNNT)/resize-c.in $@.c
	cat $@.a $@.b $@.c > $@
	@rm -f $@.a $@.g $@.b $@.c
DNNT_PIXFMT = $(DNNT_DRAIN) -framerate 5 -i $(TARGET_PATH)/$(DNNT)/pixfmt/%03d.png \
    -vf $(DNNT_OPT)/invert.pt
$(eval $(call DNNT_RESIZE_TESTS,pixfmt,$(DNNT_PIXFMT),$(DNNT_COMMA)scale$(DNNT_COMMA)format=rgb24,pixfmt.ref,default))

# The libavfilter API example doc/examples/dnn_torch_graph.c builds
# buffer -> dnn_processing -> buffersink itself, sets the options through
# AVOptions (optimize is the torch backend's child option) and is fed 4
# frames of 64x48, then 3 of 96x64.  By default it drains the graph at the
# size change and builds a new one (sync, and async with optimize); with -k
# it keeps the graph and the backend sizes the output frames itself (also
# with sr2, whose output is twice the input).  All against the oracle.
DNNT_API    = doc/examples/dnn_torch_graph$(PROGSSUF)$(EXESUF)
DNNT_API_G  = doc/examples/dnn_torch_graph$(PROGSSUF)_g$(EXESUF)
DNNT_API_IN = $(TARGET_PATH)/$(DNNT)/api-a.in 64x48 \
              $(TARGET_PATH)/$(DNNT)/api-b.in 96x64
$(DNNT)/api-a.in: ffmpeg$(PROGSSUF)$(EXESUF)
	@mkdir -p $(DNNT)
	$(DNNT_FF) -f lavfi -i testsrc2=s=64x48:r=5 -frames:v 4 \
	    -vf format=rgb24 -f rawvideo -y $@
$(DNNT)/api-b.in: ffmpeg$(PROGSSUF)$(EXESUF)
	@mkdir -p $(DNNT)
	$(DNNT_FF) -f lavfi -i testsrc2=s=96x64:r=5 -frames:v 3 \
	    -vf format=rgb24,trim=start_frame=4 -f rawvideo -y $@
$(DNNT)/api-%.ref: $(DNNT)/api-a.in $(DNNT)/api-b.in $(DNNT)/models.stamp \
                   $(SRC_PATH)/tests/dnn/oracle.py
	$(DNNT_PY)/oracle.py $(DNNT)/$*.pt rgb24 64 48 $(DNNT)/api-a.in $@.a
	$(DNNT_PY)/oracle.py $(DNNT)/$*.pt rgb24 96 64 $(DNNT)/api-b.in $@.b
	cat $@.a $@.b > $@
	@rm -f $@.a $@.b

# $(1) test name, $(2) model, $(3) options of the example
define DNNT_API_ORACLE
fate-dnn-torch-api-$(1): $(DNNT_API) $(DNNT)/api-$(2).ref
fate-dnn-torch-api-$(1): CMD = run $(DNNT_API) $(3) \
    $(TARGET_PATH)/$(DNNT)/$(2).pt - $(DNNT_API_IN)
fate-dnn-torch-api-$(1): CMP = oneoff
fate-dnn-torch-api-$(1): CMP_UNIT = u8
fate-dnn-torch-api-$(1): FUZZ = 1
fate-dnn-torch-api-$(1): REF = $(DNNT)/api-$(2).ref
FATE_DNN_TORCH += fate-dnn-torch-api-$(1)
endef

$(eval $(call DNNT_API_ORACLE,two-sizes,conv,-o async=0))
$(eval $(call DNNT_API_ORACLE,two-sizes-async,conv,-o async=1 -o nireq=2 -o optimize=1))

# -k keeps one graph: the second size is the backend's one line, then the
# example's failing call.
fate-dnn-torch-api-two-sizes-kept: $(DNNT_API) $(DNNT)/models.stamp $(DNNT)/api-a.in $(DNNT)/api-b.in
fate-dnn-torch-api-two-sizes-kept: CMD = $(DNNT_PY)/expect_error.py \
    "model output is 96x64 but the filter.s output is 64x48.*failed" \
    $(TARGET_PATH)/$(DNNT_API) -k -o async=1 -o nireq=2 $(TARGET_PATH)/$(DNNT)/conv.pt - $(DNNT_API_IN)
fate-dnn-torch-api-two-sizes-kept: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-api-two-sizes-kept

# The example's failures: the failing call and av_err2str() of its code.
# $(1) test name, $(2) regex, $(3) model file, $(4) options of the example
define DNNT_API_ERROR
fate-dnn-torch-api-$(1): $(DNNT_API) $(DNNT)/models.stamp $(DNNT)/api-a.in
fate-dnn-torch-api-$(1): CMD = $(DNNT_PY)/expect_error.py "$(2)" \
    $(TARGET_PATH)/$(DNNT_API) $(4) $(TARGET_PATH)/$(DNNT)/$(3) - \
    $(TARGET_PATH)/$(DNNT)/api-a.in 64x48
fate-dnn-torch-api-$(1): CMP = null
FATE_DNN_TORCH += fate-dnn-torch-api-$(1)
endef

$(eval $(call DNNT_API_ERROR,bad-model,cannot open model file.*avfilter_init_str.dnn_processing. failed: Invalid argument .-22.,no_such_model.pt,))
$(eval $(call DNNT_API_ERROR,bad-option,has no option .no_such_option..*av_opt_find failed: Option not found,conv.pt,-o no_such_option=1))
$(eval $(call DNNT_API_ERROR,bad-option-value,cannot set nireq=x.*av_opt_set failed: Invalid argument,conv.pt,-o nireq=x))

# Failures: exit status > 0, no signal, and the message on stderr: one line
# at error level (no TorchScript traceback).
# $(1) test name, $(2) regex, $(3) model file, $(4) pixfmt, $(5) more options
define DNNT_ERROR
fate-dnn-torch-err-$(1): $(DNNT)/models.stamp
fate-dnn-torch-err-$(1): CMD = $(DNNT_PY)/expect_error.py --one-line "$(2)" \
    $(TARGET_PATH)/$(DNNT_FF) -f lavfi -i testsrc2=s=32x24:r=5 -frames:v 3 \
    -vf format=$(4),$(DNNT_OPT)/$(3)$(5) -f null -
fate-dnn-torch-err-$(1): CMP = null
FATE_DNN_TORCH += fate-dnn-torch-err-$(1)
endef

$(eval $(call DNNT_ERROR,missing-model,cannot open model file,no_such_model.pt,rgb24,))
$(eval $(call DNNT_ERROR,not-torchscript,could not load TorchScript model,not_torchscript.pt,rgb24,))
$(eval $(call DNNT_ERROR,forward-raises-sync,model forward failed .[^ ]*raise_late.pt.$(DNNT_COMMA) input 1x3x24x32.: .*raise_late: frame,raise_late.pt,rgb24,:async=0))
$(eval $(call DNNT_ERROR,forward-raises-async,model forward failed.*raise_late: frame,raise_late.pt,rgb24,:async=1:nireq=2))

# A model that raises on one frame in the middle of a run whose forwards run
# side by side (frame 11 of 20 is all white): the error, a clean exit, no
# hang (expect_error.py gives the command 300 s).
# $(1) pixfmt
define DNNT_WHITE_MID
$(DNNT)/white-mid-$(1).in: ffmpeg$(PROGSSUF)$(EXESUF)
	@mkdir -p $(DNNT)
	$(DNNT_FF) -f lavfi -i testsrc2=s=32x24:r=5 -frames:v 10 \
	    -vf format=rgb24,format=$(1) -f rawvideo -y $$@.a
	$(DNNT_FF) -f lavfi -i color=c=white:s=32x24:r=5 -frames:v 1 \
	    -vf format=rgb24,format=$(1) -f rawvideo -y $$@.b
	$(DNNT_FF) -f lavfi -i testsrc2=s=32x24:r=5 -frames:v 9 \
	    -vf format=rgb24,trim=start_frame=10,format=$(1) -f rawvideo -y $$@.c
	cat $$@.a $$@.b $$@.c > $$@
	@rm -f $$@.a $$@.b $$@.c
endef
$(eval $(call DNNT_WHITE_MID,rgb24))
$(eval $(call DNNT_WHITE_MID,gray))

# $(1) test name, $(2) pixfmt, $(3) options
define DNNT_RAISE_MID
fate-dnn-torch-err-$(1): $(DNNT)/models.stamp $(DNNT)/white-mid-$(2).in
fate-dnn-torch-err-$(1): CMD = $(DNNT_PY)/expect_error.py --one-line \
    "model forward failed .[^ ]*raise_white.pt.$(DNNT_COMMA) input 1x[13]x24x32.: .*raise_white: an all-white frame" \
    $(TARGET_PATH)/$(DNNT_FF) -f rawvideo -pix_fmt $(2) -s 32x24 \
    -i $(TARGET_PATH)/$(DNNT)/white-mid-$(2).in \
    -vf format=$(2),$(DNNT_OPT)/raise_white.pt$(3) -f null -
fate-dnn-torch-err-$(1): CMP = null
FATE_DNN_TORCH += fate-dnn-torch-err-$(1)
endef
$(eval $(call DNNT_RAISE_MID,raises-mid-nireq4,rgb24,:async=1:nireq=4))
$(eval $(call DNNT_RAISE_MID,raises-mid-gray8-nireq8,gray,:async=1:nireq=8))

$(eval $(call DNNT_ERROR,output-3d,model output has 3 dimensions; expected 4,out3d.pt,rgb24,))
$(eval $(call DNNT_ERROR,precision-invalid,Unable to parse .precision. option value .fp8.,conv.pt,rgb24,:precision=fp8))
$(eval $(call DNNT_ERROR,output-batch,model output has batch size 1; expected 3$(DNNT_COMMA) the frames of its input .batch_size 3.,batch_first.pt,rgb24,:batch_size=3))
$(eval $(call DNNT_ERROR,output-channels,model output has 1 channel$(DNNT_COMMA) rgb24 needs 3,out1ch.pt,rgb24,))

# in_channels says the channels where the file and the first weight do not
# (invert.pt has no weight: without it every format stays, and testsrc2's
# yuv420p goes in as it is): a verbose line names the option, and the
# filter then takes RGB only, so ffmpeg converts yuv420p to rgb24 in front
# of it; 2 is an error.
$(eval $(call DNNT_ERROR,in-channels-2,in_channels is 1 or 3 .0: the model.s.,conv.pt,rgb24,:in_channels=2))
fate-dnn-torch-in-channels: $(DNNT)/models.stamp
fate-dnn-torch-in-channels: CMD = $(DNNT_PY)/expect_output.py \
    "the model takes 3 channels .the in_channels option." "fmt:yuv420p .*-> .*fmt:rgb24" \
    -- $(TARGET_PATH)/ffmpeg$(PROGSSUF)$(EXESUF) -nostdin -hide_banner -v verbose \
    -f lavfi -i testsrc2=s=32x24:r=5 -frames:v 2 -vf $(DNNT_OPT)/invert.pt:in_channels=3 -f null -
fate-dnn-torch-in-channels: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-in-channels

# The device option.  ':' separates filter options, so GPU N is
# device=cuda:device_id=N; LibTorch's cuda:N needs its colon escaped for
# both levels of a filter string (here read from a -/vf file, with no shell
# in between); cudaN is no device name.  Each must reach the backend as cuda:99,
# which the error names: "finds no CUDA device" without a GPU, "does not
# exist" with one, so these run the same on both machines.
DNNT_CUDA99 = device .$(1). .cuda:99. (asked for|does not exist)
$(eval $(call DNNT_ERROR,device-cudaN,device .cuda99. is not a device name; use cpu$(DNNT_COMMA) cuda .device_id=N for GPU N. or xpu,conv.pt,rgb24,:device=cuda99))
$(eval $(call DNNT_ERROR,device-id,$(call DNNT_CUDA99,cuda),conv.pt,rgb24,:device=cuda:device_id=99))
$(DNNT)/device-two-gpus.vf: $(DNNT)/models.stamp
	printf '%s\n' 'format=rgb24,$(DNNT_OPT)/conv.pt:device=cuda\\\:1:device_id=2' > $@
fate-dnn-torch-err-device-two-gpus: $(DNNT)/device-two-gpus.vf
fate-dnn-torch-err-device-two-gpus: CMD = $(DNNT_PY)/expect_error.py --one-line \
    "device=cuda:1 and device_id=2 name two devices" \
    $(TARGET_PATH)/$(DNNT_FF) -f lavfi -i testsrc2=s=32x24:r=5 -frames:v 3 \
    -/vf $(TARGET_PATH)/$(DNNT)/device-two-gpus.vf -f null -
fate-dnn-torch-err-device-two-gpus: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-err-device-two-gpus
# a name that is no device: the message says what parses
$(eval $(call DNNT_ERROR,device-name,device .gpu1. is not a device name; use cpu$(DNNT_COMMA) cuda .device_id=N for GPU N. or xpu,conv.pt,rgb24,:device=gpu1))

$(DNNT)/device-escaped.vf: $(DNNT)/models.stamp
	printf '%s\n' 'format=rgb24,$(DNNT_OPT)/conv.pt:device=cuda\\\:99' > $@
fate-dnn-torch-err-device-escaped: $(DNNT)/device-escaped.vf
fate-dnn-torch-err-device-escaped: CMD = $(DNNT_PY)/expect_error.py --one-line \
    "$(call DNNT_CUDA99,cuda:99)" $(TARGET_PATH)/$(DNNT_FF) \
    -f lavfi -i testsrc2=s=32x24:r=5 -frames:v 3 -/vf $(TARGET_PATH)/$(DNNT)/device-escaped.vf -f null -
fate-dnn-torch-err-device-escaped: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-err-device-escaped

# -h filter=dnn_processing says what the defaults are, what device and
# device_id take, and names precision's values.
fate-dnn-torch-help: CMD = $(DNNT_PY)/expect_output.py \
    "dnn_backend .*.default auto." "^ +auto +0 .*the one backend built in" \
    "^ +torch +4 " "nireq .*0: automatic" \
    "device .*as the backend names it .e.g. cpu$(DNNT_COMMA) cuda." "device_id .*index of the device when device gives none .e.g. device=cuda." \
    "precision .*<int>.*default auto" "^ +fp16 +2 .*float16" \
    -- $(TARGET_PATH)/ffmpeg$(PROGSSUF)$(EXESUF) -hide_banner -h filter=dnn_processing
fate-dnn-torch-help: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-help

# The requests, batch size and intra-op threads chosen, at verbose level:
# with async on the CPU the requests run side by side, sharing the filter's
# generic threads option (threads=6 over 3: 2 each; -filter_threads
# raises the graph's cap above the cores of a small machine); the automatic choice
# gives at least two; without async, LibTorch's count of the filter
# thread, which the backend does not set (a threads option is ignored with
# a warning); with batch_size 2, workers for batches of 2 requests.
# $(1) test name, $(2) filter options, $(3) regex
define DNNT_THREADS
fate-dnn-torch-threads-$(1): $(DNNT)/models.stamp
fate-dnn-torch-threads-$(1): CMD = $(DNNT_PY)/expect_output.py $(3) -- \
    $(TARGET_PATH)/ffmpeg$(PROGSSUF)$(EXESUF) -nostdin -hide_banner -v verbose \
    -filter_threads 8 -f lavfi -i testsrc2=s=32x24:r=5 -frames:v 3 \
    -vf format=rgb24,$(DNNT_OPT)/conv.pt$(2) -f null -
fate-dnn-torch-threads-$(1): CMP = null
FATE_DNN_TORCH += fate-dnn-torch-threads-$(1)
endef
$(eval $(call DNNT_THREADS,explicit,:async=1:nireq=3:threads=6,\
    "async$(DNNT_COMMA) 3 requests side by side$(DNNT_COMMA) batch size 1$(DNNT_COMMA) intra-op threads: 2$$$$"))
$(eval $(call DNNT_THREADS,auto,:async=1,\
    "async$(DNNT_COMMA) ([2-9]|[1-9][0-9]+) requests side by side$(DNNT_COMMA) batch size 1$(DNNT_COMMA) intra-op threads: [1-9]"))
$(eval $(call DNNT_THREADS,sync,:async=0,\
    "sync$(DNNT_COMMA) 1 request$(DNNT_COMMA) batch size 1$(DNNT_COMMA) intra-op threads: 0 .LibTorch.s default.$$$$"))
$(eval $(call DNNT_THREADS,sync-threads1,:async=0:threads=1,\
    "threads: only the backend.s own threads .async=1. take a count; LibTorch.s count is used" \
    "sync$(DNNT_COMMA) 1 request$(DNNT_COMMA) batch size 1$(DNNT_COMMA) intra-op threads: 0 .LibTorch.s default.$$$$"))
$(eval $(call DNNT_THREADS,batch,:async=1:nireq=4:batch_size=2:threads=2,\
    "async$(DNNT_COMMA) 4 requests side by side$(DNNT_COMMA) batch size 2$(DNNT_COMMA) intra-op threads: 1$$$$"))

# Two torch filters in one graph: the first one's workers run their
# forwards on 2 intra-op threads each, the second one's worker on LibTorch's
# default (1 here, from OMP_NUM_THREADS), which each worker sets for its
# own model: the first one's at::set_num_threads(2) is also what a new
# thread starts with, which would give the second 2 too.  $(1) what the model's start line says of its
# requests, $(2) the count its forwards read (trace level): the lines of
# one model name its context's address.
DNNT_FORWARD_THREADS = \[dnn_base @ (0x[0-9a-f]+)\] $(1)[^\n]*\n(?:[^\n]*\n)*?\[dnn_base @ \1\] forward on $(2) intra-op threads
DNNT_OWN_THREADS = format=rgb24,$(DNNT_OPT)/conv.pt:async=1:nireq=3:threads=6,$(DNNT_OPT)/conv.pt:async=1:nireq=1
fate-dnn-torch-threads-own: $(DNNT)/models.stamp
fate-dnn-torch-threads-own: CMD = env OMP_NUM_THREADS=1 $(DNNT_PY)/expect_output.py \
    "$(call DNNT_FORWARD_THREADS,async$(DNNT_COMMA) 3 requests side by side,2)" \
    "$(call DNNT_FORWARD_THREADS,async$(DNNT_COMMA) 1 request$(DNNT_COMMA),1)" -- \
    $(TARGET_PATH)/ffmpeg$(PROGSSUF)$(EXESUF) -nostdin -hide_banner -v trace \
    -filter_threads 8 -f lavfi -i testsrc2=s=32x24:r=5 -frames:v 3 -vf $(DNNT_OWN_THREADS) -f null -
fate-dnn-torch-threads-own: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-threads-own

# A worker's count (threads=1) beside a filter in the filter thread
# (async=0): at::set_num_threads() on the worker also sets what a new
# thread starts with, but the filter thread read its count at load, so
# its forwards still run on LibTorch's default (2, from OMP_NUM_THREADS).
# Needs 2 cores or more.
DNNT_BACK_THREADS = format=rgb24,$(DNNT_OPT)/conv.pt:async=1:nireq=1:threads=1,$(DNNT_OPT)/conv.pt:async=0
fate-dnn-torch-threads-filter-thread: $(DNNT)/models.stamp
fate-dnn-torch-threads-filter-thread: CMD = env OMP_NUM_THREADS=2 $(DNNT_PY)/expect_output.py \
    "$(call DNNT_FORWARD_THREADS,async$(DNNT_COMMA) 1 request$(DNNT_COMMA) batch size 1$(DNNT_COMMA) intra-op threads: 1(?![0-9]),1)" \
    "$(call DNNT_FORWARD_THREADS,sync$(DNNT_COMMA) 1 request$(DNNT_COMMA) batch size 1$(DNNT_COMMA) intra-op threads: 0 ,2)" -- \
    $(TARGET_PATH)/ffmpeg$(PROGSSUF)$(EXESUF) -nostdin -hide_banner -v trace \
    -f lavfi -i testsrc2=s=32x24:r=5 -frames:v 3 -vf $(DNNT_BACK_THREADS) -f null -
fate-dnn-torch-threads-filter-thread: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-threads-filter-thread

# optimize is per model: whether TorchScript's graph executor optimizes is a
# thread-local flag of LibTorch, set around each forward in the thread that
# runs it.  PYTORCH_JIT_LOG_LEVEL makes the executor print each graph it
# optimizes ("Optimized Graph:", then the model's class) or runs as it is.
# $(1) test name, $(2) the filters after format=rgb24, $(3) regexes
define DNNT_OPTIMIZE
fate-dnn-torch-optimize-$(1): $(DNNT)/models.stamp
fate-dnn-torch-optimize-$(1): CMD = env "PYTORCH_JIT_LOG_LEVEL=>profiling_graph_executor_impl" \
    $(DNNT_PY)/expect_output.py $(3) -- $(TARGET_PATH)/$(DNNT_FF) \
    -f lavfi -i testsrc2=s=32x24:r=5 -frames:v 3 -vf format=rgb24,$(strip $(2)) -f null -
fate-dnn-torch-optimize-$(1): CMP = null
FATE_DNN_TORCH += fate-dnn-torch-optimize-$(1)
endef

# "X Graph:", then on the next line the class of the model: graphs that
# the executor optimized, or set up to run as they are (NoOpt)
DNNT_OPT_INV    = "Optimized Graph: *\n[^\n]*__torch__\.Invert,"
DNNT_OPT_CONV   = "Optimized Graph: *\n[^\n]*__torch__\.Conv,"
DNNT_NOOPT_INV  = "NoOpt Graph: *\n[^\n]*__torch__\.Invert,"
DNNT_NOOPT_CONV = "NoOpt Graph: *\n[^\n]*__torch__\.Conv,"
DNNT_INV_ON     = $(DNNT_OPT)/invert.pt:async=0:optimize=1
DNNT_CONV_OFF   = $(DNNT_OPT)/conv.pt:async=0:optimize=0

# optimize=0 with async: the forwards on the worker thread are not optimized
$(eval $(call DNNT_OPTIMIZE,async-off,$(DNNT_OPT)/conv.pt:async=1:optimize=0,\
    $(DNNT_NOOPT_CONV) "!Optimized Graph:"))
$(eval $(call DNNT_OPTIMIZE,async-on,$(DNNT_OPT)/conv.pt:async=1:optimize=1,\
    $(DNNT_OPT_CONV) "!"$(DNNT_NOOPT_CONV)))
# two models in one thread, loaded in either order: each keeps its own
DNNT_PER_MODEL  = $(DNNT_OPT_INV) "!"$(DNNT_NOOPT_INV) $(DNNT_NOOPT_CONV) "!"$(DNNT_OPT_CONV)
$(eval $(call DNNT_OPTIMIZE,per-model-on-off,\
    $(DNNT_INV_ON)$(DNNT_COMMA)$(DNNT_CONV_OFF),$(DNNT_PER_MODEL)))
$(eval $(call DNNT_OPTIMIZE,per-model-off-on,\
    $(DNNT_CONV_OFF)$(DNNT_COMMA)$(DNNT_INV_ON),$(DNNT_PER_MODEL)))

# LibTorch's whole message, the TorchScript traceback, at verbose level.
fate-dnn-torch-err-traceback-verbose: $(DNNT)/models.stamp
fate-dnn-torch-err-traceback-verbose: CMD = $(DNNT_PY)/expect_error.py \
    "model forward failed.*LibTorch.s whole message:.*Traceback of TorchScript.*raise_late: frame" \
    $(TARGET_PATH)/ffmpeg$(PROGSSUF)$(EXESUF) -nostdin -hide_banner -v verbose \
    -f lavfi -i testsrc2=s=32x24:r=5 -frames:v 3 \
    -vf format=rgb24,$(DNNT_OPT)/raise_late.pt:async=0 -f null -
fate-dnn-torch-err-traceback-verbose: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-err-traceback-verbose

# Formats from the model: a 3-channel model offers only RGB, so a yuv420p
# input with no format filter is converted by ffmpeg in front of it and
# gives the frames of format=rgb24 in front (the reference).
$(DNNT)/negotiate.in: ffmpeg$(PROGSSUF)$(EXESUF)
	@mkdir -p $(DNNT)
	$(DNNT_FF) -f lavfi -i testsrc2=s=96x64:r=5 -frames:v 3 \
	    -vf format=yuv420p -f rawvideo -y $@
DNNT_NEGOTIATE = -f rawvideo -pix_fmt yuv420p -s 96x64 \
    -i $(TARGET_PATH)/$(DNNT)/negotiate.in -vf
$(DNNT)/negotiate.framecrc: $(DNNT)/negotiate.in $(DNNT)/models.stamp
	$(DNNT_FF) -nostats -cpuflags all $(DNNT_NEGOTIATE) format=rgb24,$(DNNT_OPT)/conv.pt \
	    -bitexact -f framecrc -y $@
fate-dnn-torch-negotiate-yuv420p-rgb: $(DNNT)/negotiate.framecrc
fate-dnn-torch-negotiate-yuv420p-rgb: CMD = framecrc -auto_conversion_filters \
    $(DNNT_NEGOTIATE) $(DNNT_OPT)/conv.pt
fate-dnn-torch-negotiate-yuv420p-rgb: REF = $(DNNT)/negotiate.framecrc
FATE_DNN_TORCH += fate-dnn-torch-negotiate-yuv420p-rgb

# Where the channels of the filter's formats come from, read at load without
# running the model: the yuv420p input above, with no format filter, reaches
# a model of 3 channels as rgb24 (ffmpeg's scaler in front) and one of 1 as
# it is; a model that tells nothing (invert, no weights) takes it as it is.
# $(1) test name, $(2) model file, $(3) regexes, $(4) what else it needs
define DNNT_CHANNELS
fate-dnn-torch-channels-$(1): $(DNNT)/negotiate.in $(DNNT)/models.stamp $(4)
fate-dnn-torch-channels-$(1): CMD = $(DNNT_PY)/expect_output.py $(3) -- \
    $(TARGET_PATH)/ffmpeg$(PROGSSUF)$(EXESUF) -nostdin -hide_banner -v verbose \
    $(DNNT_NEGOTIATE) $(DNNT_OPT)/$(2) -f null -
fate-dnn-torch-channels-$(1): CMP = null
FATE_DNN_TORCH += fate-dnn-torch-channels-$(1)
endef
DNNT_TO_RGB = "auto_scale_0 .*fmt:yuv420p .*-> .*fmt:rgb24"
$(eval $(call DNNT_CHANNELS,weight3,conv.pt,\
    "the model takes 3 channels .its first 4-D weight." $(DNNT_TO_RGB)))
$(eval $(call DNNT_CHANNELS,weight1,conv1.pt,\
    "the model takes 1 channel .its first 4-D weight." "!auto_scale_0"))
$(eval $(call DNNT_CHANNELS,extra-file,sharpen.pt,\
    "the model takes 3 channels .its extra file dnn.input.channels." $(DNNT_TO_RGB)))
$(eval $(call DNNT_CHANNELS,package,conv.pt2,\
    "the model takes 3 channels .the package.s metadata." $(DNNT_TO_RGB),$(DNNT)/conv.pt2))
$(eval $(call DNNT_CHANNELS,unknown,invert.pt,"!the model takes" "!auto_scale_0"))
# No dnn_backend: with torch the only backend built in, it is the default.
fate-dnn-torch-default-backend: $(DNNT)/conv-rgb24.ref
fate-dnn-torch-default-backend: CMD = ffmpeg -f rawvideo -pix_fmt rgb24 -s 96x64 \
    -i $(TARGET_PATH)/$(DNNT)/conv-rgb24.in \
    -vf dnn_processing=model=$(TARGET_PATH)/$(DNNT)/conv.pt -f rawvideo -
fate-dnn-torch-default-backend: CMP = oneoff
fate-dnn-torch-default-backend: CMP_UNIT = u8
fate-dnn-torch-default-backend: FUZZ = 1
fate-dnn-torch-default-backend: REF = $(DNNT)/conv-rgb24.ref
FATE_DNN_TORCH += fate-dnn-torch-default-backend

# Temporal models (window=N): the model gets 1 x N x C x H x W, the frames
# around each frame (center: N/2 before and after it, the output delayed;
# last: the N - 1 before it), the first and last frame of the stream
# repeated at its edges.  oracle.py --window builds the same windows in
# PyTorch.  7 frames, so that N=5 has both edges and a middle; gray and YUV
# of odd sizes.  A parameter-free model that returns frame k of its window
# (output t is input t - N/2 + k, or t - N + 1 + k for last) is exact
# (FUZZ 0); a weighted mean over time and a small conv net over the stacked
# frames within 1 LSB.
DNNT_WIN_SIZE_rgb24   = 48x32
DNNT_WIN_SIZE_gray8   = 47x31
DNNT_WIN_SIZE_yuv420p = 47x31
# $(1) pixfmt
define DNNT_WIN_IN
$(DNNT)/win-$(1).in: ffmpeg$(PROGSSUF)$(EXESUF)
	@mkdir -p $(DNNT)
	$(DNNT_FF) -f lavfi -i testsrc2=s=48x32:r=5 -frames:v 7 \
	    -vf format=rgb24,crop=$(subst x,:,$(DNNT_WIN_SIZE_$(1))):0:0,format=$(1) -f rawvideo -y $$@
endef
$(foreach f,rgb24 gray8 yuv420p,$(eval $(call DNNT_WIN_IN,$(f))))
# $(1) pixfmt, $(2) model, $(3) filter options after the model
DNNT_WIN_CMD = -f rawvideo -pix_fmt $(1) -s $(DNNT_WIN_SIZE_$(1)) \
    -i $(TARGET_PATH)/$(DNNT)/win-$(1).in -vf $(DNNT_OPT)/$(2).pt$(3)

# $(1) test name, $(2) model, $(3) pixfmt, $(4) window, $(5) anchor,
# $(6) allowed MAXDIFF, $(7) more options
define DNNT_WIN
$(DNNT)/$(1).ref: $(DNNT)/win-$(3).in $(DNNT)/models.stamp $(SRC_PATH)/tests/dnn/oracle.py
	$(DNNT_PY)/oracle.py --window $(4):$(5) $(DNNT)/$(2).pt $(3) \
	    $(subst x, ,$(DNNT_WIN_SIZE_$(3))) $$< $$@
fate-dnn-torch-$(1): $(DNNT)/$(1).ref
fate-dnn-torch-$(1): CMD = ffmpeg $(call DNNT_WIN_CMD,$(3),$(2),:window=$(4):window_anchor=$(5)$(7)) -f rawvideo -
fate-dnn-torch-$(1): CMP = oneoff
fate-dnn-torch-$(1): CMP_UNIT = u8
fate-dnn-torch-$(1): FUZZ = $(6)
fate-dnn-torch-$(1): REF = $(DNNT)/$(1).ref
FATE_DNN_TORCH += fate-dnn-torch-$(1)
endef
$(eval $(call DNNT_WIN,win-pick0-n3-center-rgb24,win_pick0,rgb24,3,center,0))
$(eval $(call DNNT_WIN,win-pick4-n5-center-rgb24,win_pick4,rgb24,5,center,0))
$(eval $(call DNNT_WIN,win-pick0-n5-last-rgb24,win_pick0,rgb24,5,last,0))
$(eval $(call DNNT_WIN,win-pick1-n3-last-gray8,win_pick1,gray8,3,last,0))
$(eval $(call DNNT_WIN,win-pick2-n3-center-yuv420p,win_pick2,yuv420p,3,center,0))
$(eval $(call DNNT_WIN,win-pick0-n5-center-yuv420p,win_pick0,yuv420p,5,center,0))
$(eval $(call DNNT_WIN,win-mean-n3-center-rgb24,win_mean,rgb24,3,center,1))
$(eval $(call DNNT_WIN,win-mean-n5-last-rgb24,win_mean,rgb24,5,last,1))
$(eval $(call DNNT_WIN,win-mean-n5-center-gray8,win_mean,gray8,5,center,1))
$(eval $(call DNNT_WIN,win-mean-n3-last-yuv420p,win_mean,yuv420p,3,last,1))
$(eval $(call DNNT_WIN,win-conv3-center-rgb24,win_conv3,rgb24,3,center,1))
$(eval $(call DNNT_WIN,win-conv5-center-rgb24,win_conv5,rgb24,5,center,1))
$(eval $(call DNNT_WIN,win-conv5-last-nchw-rgb24,win_conv5,rgb24,5,last,1,:channels_last=0))
$(eval $(call DNNT_WIN,win-conv3y-center-gray8,win_conv3y,gray8,3,center,1))
$(eval $(call DNNT_WIN,win-conv3y-last-yuv420p,win_conv3y,yuv420p,3,last,1))

# async with 1, 2 and 4 requests (on the CPU forwards side by side, ending
# in any order): the very frames and timestamps of async=0 (framecrc).
# $(1) name, $(2) pixfmt, $(3) model, $(4) window options
define DNNT_WIN_ASYNC
$(DNNT)/win-$(1)-sync.framecrc: $(DNNT)/win-$(2).in $(DNNT)/models.stamp
	$(DNNT_FF) -nostats $(call DNNT_WIN_CMD,$(2),$(3),$(4):async=0) -bitexact -f framecrc -y $$@
$(foreach n,1 2 4,$(eval $(call DNNT_WIN_ASYNC_N,$(1),$(2),$(3),$(4),$(n))))
endef
define DNNT_WIN_ASYNC_N
fate-dnn-torch-win-$(1)-nireq$(5): $(DNNT)/win-$(1)-sync.framecrc
fate-dnn-torch-win-$(1)-nireq$(5): CMD = framecrc $(call DNNT_WIN_CMD,$(2),$(3),$(4):async=1:nireq=$(5))
fate-dnn-torch-win-$(1)-nireq$(5): REF = $(DNNT)/win-$(1)-sync.framecrc
FATE_DNN_TORCH += fate-dnn-torch-win-$(1)-nireq$(5)
endef
$(eval $(call DNNT_WIN_ASYNC,conv5-center,rgb24,win_conv5,:window=5))
$(eval $(call DNNT_WIN_ASYNC,mean3-last,rgb24,win_mean,:window=3:window_anchor=last))
$(eval $(call DNNT_WIN_ASYNC,conv3y-center-yuv420p,yuv420p,win_conv3y,:window=3))

# Every frame out, in order, with its own timestamps: frames of irregular
# timestamps through the model that returns the middle (center) or the
# newest (last) frame of its window give the input's framecrc exactly,
# sync and async.
DNNT_WIN_PTS = -f lavfi -i testsrc2=s=48x32:r=5$(DNNT_COMMA)format=rgb24 -frames:v 9 -vf setpts=PTS+N*N
$(DNNT)/win-pts.framecrc: ffmpeg$(PROGSSUF)$(EXESUF)
	@mkdir -p $(DNNT)
	$(DNNT_FF) -nostats $(DNNT_WIN_PTS) -bitexact -f framecrc -y $@
# $(1) name, $(2) model and options
define DNNT_WIN_PTS_TEST
fate-dnn-torch-win-pts-$(1): $(DNNT)/win-pts.framecrc $(DNNT)/models.stamp
fate-dnn-torch-win-pts-$(1): CMD = framecrc $(DNNT_WIN_PTS),$(DNNT_OPT)/$(2)
fate-dnn-torch-win-pts-$(1): REF = $(DNNT)/win-pts.framecrc
FATE_DNN_TORCH += fate-dnn-torch-win-pts-$(1)
endef
$(eval $(call DNNT_WIN_PTS_TEST,center-sync,win_pick2.pt:window=5:async=0))
$(eval $(call DNNT_WIN_PTS_TEST,center-nireq3,win_pick2.pt:window=5:async=1:nireq=3))
$(eval $(call DNNT_WIN_PTS_TEST,last-nireq2,win_pick2.pt:window=3:window_anchor=last:async=1:nireq=2))

# Every frame out with its own side data and properties: a decoded MPEG-4
# stream with B-frames whose frames carry the decoder's video encoding
# parameters (all but the last) and their own picture type and key flag,
# through the model that returns the middle (center) or the newest (last)
# frame of its window, gives what showinfo says of the input, line by line.
DNNT_WIN_SD = -export_side_data venc_params -i $(TARGET_PATH)/$(DNNT)/win-sd.avi \
    -vf setpts=PTS+N*N,format=rgb24
DNNT_SHOWINFO = $(DNNT_PY)/showinfo_log.py -- $(TARGET_PATH)/ffmpeg$(PROGSSUF)$(EXESUF) \
    -nostdin -nostats -hide_banner -v info
$(DNNT)/win-sd.avi: ffmpeg$(PROGSSUF)$(EXESUF)
	@mkdir -p $(DNNT)
	$(DNNT_FF) -f lavfi -i testsrc2=s=48x32:r=5 -frames:v 9 -c:v mpeg4 -b:v 20k -g 4 -bf 1 \
	    -bitexact -y $@
$(DNNT)/win-sd.ref: $(DNNT)/win-sd.avi $(SRC_PATH)/tests/dnn/showinfo_log.py
	$(DNNT_SHOWINFO) $(DNNT_WIN_SD),showinfo -f null - > $@
# $(1) name, $(2) model and options
define DNNT_WIN_SD_TEST
fate-dnn-torch-win-sidedata-$(1): $(DNNT)/win-sd.ref $(DNNT)/models.stamp
fate-dnn-torch-win-sidedata-$(1): CMD = $(DNNT_SHOWINFO) $(DNNT_WIN_SD),$(DNNT_OPT)/$(2),showinfo -f null -
fate-dnn-torch-win-sidedata-$(1): REF = $(DNNT)/win-sd.ref
FATE_DNN_TORCH += fate-dnn-torch-win-sidedata-$(1)
endef
$(eval $(call DNNT_WIN_SD_TEST,center-nireq3,win_pick2.pt:window=5:async=1:nireq=3))
$(eval $(call DNNT_WIN_SD_TEST,last-sync,win_pick2.pt:window=3:window_anchor=last:async=0))

# A stream that changes size twice (the resize stream above): ffmpeg drains
# the graph at each change (-reinit_drain 1), each part is a stream of its
# own with its own edges repeated; sync against the oracle run on each
# part, async as sync.
$(DNNT)/resize-win.ref: $(DNNT)/resize/stamp $(DNNT)/models.stamp $(SRC_PATH)/tests/dnn/oracle.py
	$(DNNT_PY)/oracle.py --window 3:center $(DNNT)/win_conv3.pt rgb24 64 48 $(DNNT)/resize-a.in $@.a
	$(DNNT_PY)/oracle.py --window 3:center $(DNNT)/win_conv3.pt rgb24 80 56 $(DNNT)/resize-b.in $@.b
	$(DNNT_PY)/oracle.py --window 3:center $(DNNT)/win_conv3.pt rgb24 64 48 $(DNNT)/resize-c.in $@.c
	cat $@.a $@.b $@.c > $@
	@rm -f $@.a $@.b $@.c
DNNT_RESIZE_WIN = $(DNNT_DRAIN) -framerate 5 -i $(TARGET_PATH)/$(DNNT)/resize/%03d.png \
    -vf format=rgb24,$(DNNT_OPT)/win_conv3.pt:window=3
$(eval $(call DNNT_RESIZE_TESTS,resize-win,$(DNNT_RESIZE_WIN),,resize-win.ref,))

# The same stream in one kept graph (-reinit_filter 0): the backend cuts
# the window itself at each size change, each part's edges repeated, and
# every frame comes out.  The model gives one output size for any input
# (the top-left 16x16 of the first frame of its window), so that the kept
# graph's output link fits every part; sync (nireq=1: the cut runs the
# waiting tasks before the new frame takes the request) and async.
$(DNNT)/resize-win-kept.ref: $(DNNT)/resize/stamp $(DNNT)/models.stamp $(SRC_PATH)/tests/dnn/oracle.py
	$(DNNT_PY)/oracle.py --window 3:center $(DNNT)/win_crop0.pt rgb24 64 48 $(DNNT)/resize-a.in $@.a
	$(DNNT_PY)/oracle.py --window 3:center $(DNNT)/win_crop0.pt rgb24 80 56 $(DNNT)/resize-b.in $@.b
	$(DNNT_PY)/oracle.py --window 3:center $(DNNT)/win_crop0.pt rgb24 64 48 $(DNNT)/resize-c.in $@.c
	cat $@.a $@.b $@.c > $@
	@rm -f $@.a $@.b $@.c
DNNT_RESIZE_WIN_KEPT = -reinit_filter 0 -framerate 5 -i $(TARGET_PATH)/$(DNNT)/resize/%03d.png \
    -vf format=rgb24,$(DNNT_OPT)/win_crop0.pt:window=3
$(eval $(call DNNT_RESIZE_TESTS,resize-win-kept,$(DNNT_RESIZE_WIN_KEPT),,resize-win-kept.ref,))

# Bad windows and window models: one line at error level, a non-zero exit.
$(eval $(call DNNT_ERROR,win-even-center,window=4 with window_anchor=center: the middle frame needs an odd window,win_mean.pt,rgb24,:window=4))
$(eval $(call DNNT_ERROR,win-above-64,Value 65.* for parameter .window. out of range .1 - 64.,win_mean.pt,rgb24,:window=65))
$(eval $(call DNNT_ERROR,win-output-5d,model output is 5-D .3 frames.; a model of window=3 returns the output of one frame,win_out5d.pt,rgb24,:window=3))
$(eval $(call DNNT_ERROR,win-output-frames,model output has 5 frames; a model of window=5 returns the output of one frame,win_frames.pt,rgb24,:window=5:window_anchor=last))
$(eval $(call DNNT_ERROR,win-model-4d,model failed on a window probe input 1x3x3x24x32 .window=3: 1 x N x C x H x W.: .*conv2d,conv.pt,rgb24,:window=3))
$(eval $(call DNNT_ERROR,win-batch,batch_size 2 with window=3: a window model runs one window per inference,win_mean.pt,rgb24,:window=3:batch_size=2:nireq=2))

# -h filter=dnn_processing names the window options and the anchors.
fate-dnn-torch-help-window: CMD = $(DNNT_PY)/expect_output.py \
    "window .*<int>.*frames per inference.*from 1 to 64.*default 1" \
    "window_anchor .*<int>.*default center" "^ +center +0 .*the middle one" "^ +last +1 .*the newest one" \
    -- $(TARGET_PATH)/ffmpeg$(PROGSSUF)$(EXESUF) -hide_banner -h filter=dnn_processing
fate-dnn-torch-help-window: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-help-window

# The patch series (tools/make-series.sh): it must rebuild the prepared tree
# exactly and apply with git am to pristine FFmpeg; its author and its
# MAINTAINERS entry are the git identity's, and with none it is an error.  DNNT_TOP and
# DNNT_TARBALL come from the project's Makefile; without them, no test.
ifneq ($(DNNT_TOP),)
fate-dnn-torch-series: CMD = sh $(DNNT_TOP)/tools/series-test.sh $(DNNT_TARBALL) \
    $(SRC_PATH) $(DNNT_TOP)/build/series-test
fate-dnn-torch-series: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-series

# The same on upstream master (tools/upstream.sh), where the project's
# Makefile names the snapshot (DNNT_MASTER): make series UPSTREAM=master on
# a master tree prepared with patches/master/, then git am on a fresh one.
ifneq ($(DNNT_MASTER),)
fate-dnn-torch-series-master: CMD = UPSTREAM=master sh $(DNNT_TOP)/tools/series-test.sh \
    $(DNNT_MASTER) - $(DNNT_TOP)/build/series-test-master
fate-dnn-torch-series-master: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-series-master
endif

# The model of tools/export-model.py (the README's) is the demo's sharpen
# model: the same frames, on yuv420p input with no format filter.
$(DNNT)/exported.pt: $(DNNT_TOP)/tools/export-model.py
	@mkdir -p $(DNNT)
	$(TORCH_PYTHON) $< demo $@ --precision fp32 > /dev/null
$(DNNT)/sharpen.framecrc: $(DNNT)/negotiate.in $(DNNT)/models.stamp
	$(DNNT_FF) -nostats -cpuflags all $(DNNT_NEGOTIATE) $(DNNT_OPT)/sharpen.pt \
	    -bitexact -f framecrc -y $@
fate-dnn-torch-export-model: $(DNNT)/exported.pt $(DNNT)/sharpen.framecrc
fate-dnn-torch-export-model: CMD = framecrc -auto_conversion_filters \
    $(DNNT_NEGOTIATE) dnn_processing=model=$(TARGET_PATH)/$(DNNT)/exported.pt
fate-dnn-torch-export-model: REF = $(DNNT)/sharpen.framecrc
FATE_DNN_TORCH += fate-dnn-torch-export-model

# The lean and full profiles build in their own folders, ./ffmpeg follows
# the last configure (tools/profiles-test.sh, with a stub FFmpeg).
fate-dnn-torch-profiles: CMD = sh $(DNNT_TOP)/tools/profiles-test.sh \
    $(DNNT_TOP)/build/profiles-test
fate-dnn-torch-profiles: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-profiles
endif

# AOTInductor packages: NAME.pt2 is model NAME exported for heights 16..64
# and widths 16..96 and compiled for the CPU (kept in tests/data: made once).
# Against PyTorch running the TorchScript model on the same frames: packed
# RGB and BGR, gray and the Y plane (conv1), x2 (sr2), a package compiled
# for float16 input (against PyTorch in float16), one exported from a
# channels-last input (given NHWC-strided input, as its metadata says),
# async and sync; the
# format is told by the content, not the name (a package named .pt,
# TorchScript named .pt2).  A frame outside the exported sizes, a precision
# or a layout other than the package's and a package whose compiled
# library is damaged or whose metadata does not describe its input (the
# dnn.input keys of tools/python/dnn_package.py) are one-line errors; so is a
# package without aoti=1, named .pt2 or .pt.
$(DNNT)/%.pt2: $(SRC_PATH)/tests/dnn/models.py
	@mkdir -p $(DNNT)
	$(DNNT_PY)/models.py $(DNNT) $*_pt2
$(DNNT)/pkg_named.pt: $(DNNT)/conv.pt2
	cp $< $@
$(DNNT)/ts_named.pt2: $(DNNT)/models.stamp
	cp $(DNNT)/conv.pt $@
$(DNNT)/corrupt.pt2: $(DNNT)/conv.pt2
	$(DNNT_PY)/models.py --damage $< $@
$(DNNT)/nometa.pt2: $(DNNT)/conv.pt2
	$(DNNT_PY)/models.py --strip-metadata $< $@

# $(1) test name, $(2) package file, $(3) options, $(4) pixfmt, $(5) model
# for the oracle, $(6) width, $(7) height, $(8) allowed MAXDIFF (default 1),
# $(9) the dtype the oracle casts the model to
define DNNT_PT2_ORACLE
$(eval $(call DNNT_ORACLE,$(1),$(5),$(4),$(6),$(7),,u8,$(or $(8),1),$(9)))
fate-dnn-torch-$(1): $(DNNT)/$(2)
fate-dnn-torch-$(1): CMD = ffmpeg -f rawvideo -pix_fmt $(4) -s $(6)x$(7) \
    -i $(TARGET_PATH)/$(DNNT)/$(1).in -vf $(DNNT_OPT)/$(2)$(3) -f rawvideo -
endef

$(eval $(call DNNT_PT2_ORACLE,pt2-rgb24,conv.pt2,,rgb24,conv,96,64))
$(eval $(call DNNT_PT2_ORACLE,pt2-bgr24-sync,conv.pt2,:async=0,bgr24,conv,96,64))
$(eval $(call DNNT_PT2_ORACLE,pt2-gray8,conv1.pt2,,gray8,conv1,91,51))
$(eval $(call DNNT_PT2_ORACLE,pt2-yuv420p,conv1.pt2,:async=0,yuv420p,conv1,91,51))
$(eval $(call DNNT_PT2_ORACLE,pt2-sr2-rgb24,sr2.pt2,,rgb24,sr2,64,48))
# a package compiled for float16 input runs in float16 (precision=auto)
$(eval $(call DNNT_PT2_ORACLE,pt2-fp16-rgb24,conv_fp16.pt2,,rgb24,conv,96,64,2,fp16))
$(eval $(call DNNT_PT2_ORACLE,pt2-cl-rgb24,conv_cl.pt2,,rgb24,conv,96,64))
$(eval $(call DNNT_PT2_ORACLE,pt2-cl-bgr24-sync,conv_cl.pt2,:async=0:channels_last=1,bgr24,conv,96,64))
$(eval $(call DNNT_PT2_ORACLE,pt2-by-content,pkg_named.pt,,rgb24,conv,96,64))
$(eval $(call DNNT_PT2_ORACLE,pt2-torchscript-by-content,ts_named.pt2,,rgb24,conv,96,64))

fate-dnn-torch-err-pt2-size: $(DNNT)/conv.pt2
fate-dnn-torch-err-pt2-size: CMD = $(DNNT_PY)/expect_error.py --one-line \
    "exported for width 16..96 .torch.export.s dynamic shapes.$(DNNT_COMMA) not 128" \
    $(TARGET_PATH)/$(DNNT_FF) -f lavfi -i testsrc2=s=128x48:r=5 -frames:v 3 \
    -vf format=rgb24,$(DNNT_OPT)/conv.pt2 -f null -
fate-dnn-torch-err-pt2-size: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-err-pt2-size

$(eval $(call DNNT_ERROR,pt2-precision,conv.pt2. is an AOTInductor package compiled for fp32 input: precision=fp16 cannot change it,conv.pt2,rgb24,:precision=fp16))
fate-dnn-torch-err-pt2-precision: $(DNNT)/conv.pt2
$(eval $(call DNNT_ERROR,pt2-layout-nchw,conv.pt2. is an AOTInductor package exported for NCHW input: channels_last=1 cannot change it,conv.pt2,rgb24,:channels_last=1))
fate-dnn-torch-err-pt2-layout-nchw: $(DNNT)/conv.pt2
$(eval $(call DNNT_ERROR,pt2-layout-cl,conv_cl.pt2. is an AOTInductor package exported for channels-last input: channels_last=0 cannot change it,conv_cl.pt2,rgb24,:channels_last=0))
fate-dnn-torch-err-pt2-layout-cl: $(DNNT)/conv_cl.pt2
$(eval $(call DNNT_ERROR,pt2-corrupt,could not load AOTInductor package .[^ ]*corrupt.pt2.: ,corrupt.pt2,rgb24,))
fate-dnn-torch-err-pt2-corrupt: $(DNNT)/corrupt.pt2
$(eval $(call DNNT_ERROR,pt2-no-metadata,nometa.pt2.: the metadata of the package.s model .model. has no valid dnn.input.dtype,nometa.pt2,rgb24,))
fate-dnn-torch-err-pt2-no-metadata: $(DNNT)/nometa.pt2
DNNT_NO_AOTI = is an AOTInductor package: its compiled code runs in this process$(DNNT_COMMA) so it loads only with aoti=1
$(eval $(call DNNT_ERROR,pt2-no-aoti,conv.pt2. $(DNNT_NO_AOTI),conv.pt2,rgb24,:aoti=0))
fate-dnn-torch-err-pt2-no-aoti: $(DNNT)/conv.pt2
$(eval $(call DNNT_ERROR,pt2-no-aoti-named-pt,pkg_named.pt. $(DNNT_NO_AOTI),pkg_named.pt,rgb24,:aoti=0))
fate-dnn-torch-err-pt2-no-aoti-named-pt: $(DNNT)/pkg_named.pt
# a window (5-D input) for a package exported for single frames
$(eval $(call DNNT_ERROR,pt2-window,window probe input 1x3x3x24x32 .window=3: 1 x N x C x H x W.: the package takes 4-D input .1 x C x H x W.$(DNNT_COMMA) not 5-D: it was exported for single frames,conv.pt2,rgb24,:window=3))
fate-dnn-torch-err-pt2-window: $(DNNT)/conv.pt2

# Packages of a temporal model (window=3, 5-D input 1 x N x C x H x W):
# win_conv3 as models.py compiles it (NCHW; and win_conv3y, 1 channel, on
# the Y plane), and as tools/export-model.py --window 3 exports the module
# with the same weights, channels-last (H x W x N x C in memory, the
# window the backend assembles, which the package is handed as it is) and
# as TorchScript; each against the oracle of the TorchScript test on the
# same windows (oracle.py --window), center and last, sync and async.  The exporter says what it wrote (the 5-D
# shape and the layout of the metadata).  A window other than the
# package's, a 5-D package without a window, and --window with a
# single-image checkpoint (spandrel's) are one-line errors.
$(DNNT)/win_conv3_weights.pt: $(SRC_PATH)/tests/dnn/models.py
	@mkdir -p $(DNNT)
	$(DNNT_PY)/models.py $(DNNT) win_conv3_weights
# $(1) the file, $(2) more options of the exporter
define DNNT_WIN_EXPORT
$(DNNT)/$(1): $(DNNT)/win_conv3_weights.pt $(DNNT_TOP)/tools/export-model.py
	$$(DNNT_EXPORT) "$(SRC_PATH)/tests/dnn/models.py:WinConv(n=3)" $$@ --weights $$< \
	    --window 3 --precision fp32 $(2) > $$@.log
endef
$(eval $(call DNNT_WIN_EXPORT,win_export.pt,))
$(eval $(call DNNT_WIN_EXPORT,win_export_cl.pt2,--layout cl))
# $(1) test name, $(2) the model file, $(3) the TorchScript model of the
# oracle, $(4) pixfmt, $(5) anchor, $(6) more options
define DNNT_WIN_PT2
$(DNNT)/$(1).ref: $(DNNT)/win-$(4).in $(DNNT)/models.stamp $(SRC_PATH)/tests/dnn/oracle.py
	$(DNNT_PY)/oracle.py --window 3:$(5) $(DNNT)/$(3).pt $(4) \
	    $(subst x, ,$(DNNT_WIN_SIZE_$(4))) $$< $$@
fate-dnn-torch-$(1): $(DNNT)/$(2) $(DNNT)/$(1).ref
fate-dnn-torch-$(1): CMD = ffmpeg -f rawvideo -pix_fmt $(4) -s $(DNNT_WIN_SIZE_$(4)) \
    -i $(TARGET_PATH)/$(DNNT)/win-$(4).in \
    -vf $(DNNT_OPT)/$(2):window=3:window_anchor=$(5)$(6) -f rawvideo -
fate-dnn-torch-$(1): CMP = oneoff
fate-dnn-torch-$(1): CMP_UNIT = u8
fate-dnn-torch-$(1): FUZZ = 1
fate-dnn-torch-$(1): REF = $(DNNT)/$(1).ref
FATE_DNN_TORCH += fate-dnn-torch-$(1)
endef
$(eval $(call DNNT_WIN_PT2,win-pt2-conv3-center,win_conv3.pt2,win_conv3,rgb24,center,))
$(eval $(call DNNT_WIN_PT2,win-pt2-conv3-last-sync,win_conv3.pt2,win_conv3,rgb24,last,:async=0))
$(eval $(call DNNT_WIN_PT2,win-pt2-export-cl-center,win_export_cl.pt2,win_conv3,rgb24,center,:async=0))
$(eval $(call DNNT_WIN_PT2,win-pt2-export-cl-last,win_export_cl.pt2,win_conv3,rgb24,last,:nireq=2))
$(eval $(call DNNT_WIN_PT2,win-export-ts-center,win_export.pt,win_conv3,rgb24,center,))
$(eval $(call DNNT_WIN_PT2,win-export-ts-last,win_export.pt,win_conv3,rgb24,last,))
# the Y plane alone: the package's channels (1) are read at dimension 2
$(eval $(call DNNT_WIN_PT2,win-pt2-conv3y-center-yuv420p,win_conv3y.pt2,win_conv3y,yuv420p,center,))
fate-dnn-torch-win-export-found: $(DNNT)/win_export.pt $(DNNT)/win_export_cl.pt2
fate-dnn-torch-win-export-found: CMD = $(DNNT_PY)/expect_output.py \
    "found WinConv .models.py.: x1$(DNNT_COMMA) 3 channels.*a window of 3 frames" \
    "wrote .*win_export_cl.pt2: pt2 for cpu$(DNNT_COMMA) fp32$(DNNT_COMMA) a dynamic one .1x3x3x16..2160x16..3840.$(DNNT_COMMA) nhwc" \
    "wrote .*win_export.pt: torchscript for cpu$(DNNT_COMMA) fp32" \
    -- cat $(TARGET_PATH)/$(DNNT)/win_export_cl.pt2.log $(TARGET_PATH)/$(DNNT)/win_export.pt.log
fate-dnn-torch-win-export-found: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-win-export-found
$(eval $(call DNNT_ERROR,pt2-win-mismatch,window probe input 1x5x3x24x32 .window=5: 1 x N x C x H x W.: the package was exported for a window of 3 frames$(DNNT_COMMA) not 5: use window=3,win_conv3.pt2,rgb24,:window=5:window_anchor=last))
fate-dnn-torch-err-pt2-win-mismatch: $(DNNT)/win_conv3.pt2
$(eval $(call DNNT_ERROR,pt2-win-none,3x32x24 probe input: the package takes 5-D input .1 x N x C x H x W$(DNNT_COMMA) a window of N=3 frames.$(DNNT_COMMA) not 4-D: use window=3,win_conv3.pt2,rgb24,))
fate-dnn-torch-err-pt2-win-none: $(DNNT)/win_conv3.pt2

# tools/export-model.py on checkpoints of four spandrel families (small
# configurations, seeded random weights, tests/dnn/spandrel_models.py):
# each is found (architecture, scale, channels), exported for the CPU and,
# run by the filter, gives the frames of spandrel's own module in PyTorch
# (oracle.py) within 1 LSB: Compact x4, ESRGAN x2 and DnCNN (1-channel
# x1, a denoiser, on gray8 and on the Y plane of yuv420p) as packages,
# SPAN x2 from safetensors as TorchScript (the CPU default), since
# torch.export fails on SPAN's blocks (a one-line error, tested below).
DNNT_SP     = $(DNNT)/spandrel
DNNT_EXPORT = $(TORCH_PYTHON) $(DNNT_TOP)/tools/export-model.py
$(DNNT_SP)/stamp: $(SRC_PATH)/tests/dnn/spandrel_models.py
	$(DNNT_PY)/spandrel_models.py $(DNNT_SP)
	@touch $@
$(DNNT)/sp-%.in: $(DNNT)/models.stamp
	$(DNNT_FF) -f lavfi -i testsrc2=s=40x32:r=5 -frames:v 3 -vf format=$* -f rawvideo -y $@

# $(1) model, $(2) checkpoint, $(3) what the exporter says it found,
# $(4) the output file's suffix (pt2: a package; pt: TorchScript)
define DNNT_SP_EXPORT
$(DNNT_SP)/$(1).$(4): $(DNNT_SP)/stamp $(DNNT_TOP)/tools/export-model.py
	$(DNNT_EXPORT) $(DNNT_SP)/$(2) $$@ --precision fp32 > $$@.log
fate-dnn-torch-export-$(1)-found: $(DNNT_SP)/$(1).$(4)
fate-dnn-torch-export-$(1)-found: CMD = $(DNNT_PY)/expect_output.py $(3) \
    "wrote .*$(1).$(4): $(if $(filter pt2,$(4)),pt2,torchscript) for cpu, fp32" \
    -- cat $(TARGET_PATH)/$(DNNT_SP)/$(1).$(4).log
fate-dnn-torch-export-$(1)-found: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-export-$(1)-found
endef
$(eval $(call DNNT_SP_EXPORT,compact,compact.pth,"found RealESRGAN Compact: x4$(DNNT_COMMA) 3 channels",pt2))
$(eval $(call DNNT_SP_EXPORT,esrgan,esrgan.pth,"found ESRGAN: x2$(DNNT_COMMA) 3 channels",pt2))
$(eval $(call DNNT_SP_EXPORT,span,span.safetensors,"found SPAN: x2$(DNNT_COMMA) 3 channels",pt))
$(eval $(call DNNT_SP_EXPORT,dncnn,dncnn.pth,"found DnCNN: x1$(DNNT_COMMA) 1 channel$(DNNT_COMMA)",pt2))

# $(1) test, $(2) model file, $(3) checkpoint, $(4) pixel format, $(5) WxH
# (an input of 40x32 is cropped to it), $(6) the oracle's dtype (the
# model's), $(7) the LSB allowed [1]
define DNNT_SP_RUN
$(DNNT_SP)/$(1).in: $(DNNT)/sp-$(4).in $(DNNT_SP)/stamp
	$(DNNT_FF) -f rawvideo -pix_fmt $(4) -s 40x32 -i $$< -vf crop=$(subst x,:,$(5)):0:0 -f rawvideo -y $$@
$(DNNT_SP)/$(1).ref: $(DNNT_SP)/$(1).in $(DNNT_SP)/stamp
	$(DNNT_PY)/oracle.py $(DNNT_SP)/$(3) $(4) $(subst x, ,$(5)) $$< $$@ $(6)
fate-dnn-torch-export-$(1): $(DNNT_SP)/$(2) $(DNNT_SP)/$(1).ref
fate-dnn-torch-export-$(1): CMD = ffmpeg -f rawvideo -pix_fmt $(4) -s $(5) \
    -i $(TARGET_PATH)/$(DNNT_SP)/$(1).in -vf $(DNNT_OPT)/spandrel/$(2) -f rawvideo -
fate-dnn-torch-export-$(1): CMP = oneoff
fate-dnn-torch-export-$(1): CMP_UNIT = u8
fate-dnn-torch-export-$(1): FUZZ = $(or $(7),1)
fate-dnn-torch-export-$(1): REF = $(DNNT_SP)/$(1).ref
FATE_DNN_TORCH += fate-dnn-torch-export-$(1)
endef
$(eval $(call DNNT_SP_RUN,compact-rgb24,compact.pt2,compact.pth,rgb24,40x32))
$(eval $(call DNNT_SP_RUN,esrgan-rgb24,esrgan.pt2,esrgan.pth,rgb24,40x32))
$(eval $(call DNNT_SP_RUN,span-rgb24,span.pt,span.safetensors,rgb24,40x32))
$(eval $(call DNNT_SP_RUN,dncnn-gray8,dncnn.pt2,dncnn.pth,gray8,40x32))
$(eval $(call DNNT_SP_RUN,dncnn-yuv420p,dncnn.pt2,dncnn.pth,yuv420p,40x32))

# A package with models for two named sizes and a dynamic one: each named
# size runs its own model (the verbose line says which), another size the
# dynamic one; all give the oracle's frames.
$(DNNT_SP)/compact-sizes.pt2: $(DNNT_SP)/stamp $(DNNT_TOP)/tools/export-model.py
	$(DNNT_EXPORT) $(DNNT_SP)/compact.pth $@ --sizes 40x32,32x24 --precision fp32 > $@.log
# $(1) WxH, $(2) the model that must run it
define DNNT_SP_SIZE
$(eval $(call DNNT_SP_RUN,sizes-$(1),compact-sizes.pt2,compact.pth,rgb24,$(1)))
fate-dnn-torch-export-sizes-$(1)-log: $(DNNT_SP)/compact-sizes.pt2 $(DNNT_SP)/sizes-$(1).in
fate-dnn-torch-export-sizes-$(1)-log: CMD = $(DNNT_PY)/expect_output.py \
    "package model .$(2). for $(1)" -- $(TARGET_PATH)/ffmpeg$(PROGSSUF)$(EXESUF) -nostdin -v verbose \
    -f rawvideo -pix_fmt rgb24 -s $(1) -i $(TARGET_PATH)/$(DNNT_SP)/sizes-$(1).in \
    -vf $(DNNT_OPT)/spandrel/compact-sizes.pt2 -f null -
fate-dnn-torch-export-sizes-$(1)-log: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-export-sizes-$(1)-log
endef
$(eval $(call DNNT_SP_SIZE,40x32,s40x32))
$(eval $(call DNNT_SP_SIZE,32x24,s32x24))
$(eval $(call DNNT_SP_SIZE,24x16,model))

# The CPU's default precision: bf16 where this CPU has bf16 units and the
# model in bf16 stays within 40 dB of float32 (this machine: avx512_bf16),
# else fp32, and the exporter says which and why; the TorchScript it
# writes runs in that dtype (precision=auto), against spandrel's module in
# the same dtype within 2 LSB.
DNNT_SP_AUTO = $(if $(DNNT_CPU_BF16),bf16,fp32)
$(DNNT_SP)/compact-auto.pt: $(DNNT_SP)/stamp $(DNNT_TOP)/tools/export-model.py
	$(DNNT_EXPORT) $(DNNT_SP)/compact.pth $@ > $@.log
fate-dnn-torch-export-cpu-default: $(DNNT_SP)/compact-auto.pt
fate-dnn-torch-export-cpu-default: CMD = $(DNNT_PY)/expect_output.py \
    $(if $(DNNT_CPU_BF16),"  bf16: this CPU has units for it .*stays [0-9.]+ dB from float32","  fp32: this CPU has no bf16 units") \
    "wrote .*compact-auto.pt: torchscript for cpu, $(DNNT_SP_AUTO)" \
    -- cat $(TARGET_PATH)/$(DNNT_SP)/compact-auto.pt.log
fate-dnn-torch-export-cpu-default: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-export-cpu-default
$(eval $(call DNNT_SP_RUN,cpu-default-rgb24,compact-auto.pt,compact.pth,rgb24,40x32,$(DNNT_SP_AUTO),2))

# --like VIDEO: the sizes of a file's video streams (ffprobe), here 40x32,
# each compiled as its own model of the package.
$(DNNT_SP)/like.nut: $(DNNT_SP)/stamp
	$(DNNT_FF) -f lavfi -i testsrc2=s=40x32:r=5 -frames:v 2 -c:v rawvideo -f nut -y $@
$(DNNT_SP)/compact-like.pt2: $(DNNT_SP)/like.nut $(DNNT_TOP)/tools/export-model.py
	$(DNNT_EXPORT) $(DNNT_SP)/compact.pth $@ --like $< --precision fp32 > $@.log
fate-dnn-torch-export-like: $(DNNT_SP)/compact-like.pt2
fate-dnn-torch-export-like: CMD = $(DNNT_PY)/expect_output.py \
    "wrote .*compact-like.pt2: pt2 for cpu, fp32, models for 40x32 and a dynamic one" \
    -- cat $(TARGET_PATH)/$(DNNT_SP)/compact-like.pt2.log
fate-dnn-torch-export-like: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-export-like

# What the exporter refuses, in one line, with a non-zero status, no
# signal and no file written: a checkpoint of no known architecture, a
# truncated one, a pickle that would run code, a size the package cannot
# take, a model torch.export cannot export, --window for a single-image
# architecture.
# $(1) test, $(2) regex, $(3) source and options
define DNNT_SP_ERR
fate-dnn-torch-export-err-$(1): $(DNNT_SP)/stamp
fate-dnn-torch-export-err-$(1): CMD = $(DNNT_PY)/expect_error.py --one-line $(2) \
    $(DNNT_EXPORT) $(3) $(TARGET_PATH)/$(DNNT_SP)/err-$(1).pt2 && \
    test ! -e $(TARGET_PATH)/$(DNNT_SP)/err-$(1).pt2
fate-dnn-torch-export-err-$(1): CMP = null
FATE_DNN_TORCH += fate-dnn-torch-export-err-$(1)
endef
$(eval $(call DNNT_SP_ERR,unknown,"unknown.pth: no architecture that spandrel .* knows",$(TARGET_PATH)/$(DNNT_SP)/unknown.pth))
$(eval $(call DNNT_SP_ERR,truncated,"truncated.pth: cannot read it as a checkpoint",$(TARGET_PATH)/$(DNNT_SP)/truncated.pth))
$(eval $(call DNNT_SP_ERR,pickle,"pickle.pth: not a plain checkpoint .*only weights are loaded",$(TARGET_PATH)/$(DNNT_SP)/pickle.pth))
$(eval $(call DNNT_SP_ERR,size,"4000x2000 is above the largest frame",$(TARGET_PATH)/$(DNNT_SP)/compact.pth --sizes 4000x2000))
# torch.export fails on SPAN's blocks in torch 2.11, not in 2.8
ifneq ($(DNNT_TORCH_2_11),)
$(eval $(call DNNT_SP_ERR,export,"torch.export could not export SPAN for any frame size .*--format torchscript may work",$(TARGET_PATH)/$(DNNT_SP)/span.safetensors))
endif
$(eval $(call DNNT_SP_ERR,window,"window 3: RealESRGAN Compact takes single images$(DNNT_COMMA) not a window of frames",$(TARGET_PATH)/$(DNNT_SP)/compact.pth --window 3))

# --enable-libtorch-cuda: ffmpeg needs libtorch_cuda (its load registers
# LibTorch's CUDA kernels) under FFmpeg's --as-needed with no linker
# option, as the CUDA unit names a symbol of it (ff_dnn_th_cuda_log_device).
ifeq ($(CONFIG_LIBTORCH_CUDA),yes)
fate-dnn-torch-link-torch-cuda: CMD = $(DNNT_PY)/expect_output.py \
    "NEEDED.*\[libtorch_cuda\.so\]" -- readelf -d $(TARGET_PATH)/ffmpeg$(PROGSSUF)_g$(EXESUF)
fate-dnn-torch-link-torch-cuda: CMP = null
FATE_DNN_TORCH += fate-dnn-torch-link-torch-cuda
endif

# A build without AOTInductor packages (configure leaves
# --enable-libtorch-aoti out where LibTorch's loader is not the one the
# backend calls) runs the tests that need no package: those that run one
# through ffmpeg are left out; the exporter's own and a TorchScript file
# named .pt2 stay.
ifneq ($(CONFIG_LIBTORCH_AOTI),yes)
DNNT_RUNS_PACKAGE = fate-dnn-torch-pt2-% fate-dnn-torch-err-pt2-% fate-dnn-torch-win-pt2-% \
    fate-dnn-torch-channels-package fate-dnn-torch-export-sizes-% \
    fate-dnn-torch-export-compact-rgb24 fate-dnn-torch-export-esrgan-rgb24 \
    fate-dnn-torch-export-dncnn-gray8 fate-dnn-torch-export-dncnn-yuv420p
FATE_DNN_TORCH := $(filter-out $(DNNT_RUNS_PACKAGE),$(FATE_DNN_TORCH)) \
    fate-dnn-torch-pt2-torchscript-by-content
endif

FATE_FFMPEG-$(CONFIG_LIBTORCH) += $(FATE_DNN_TORCH)

# ffmpeg's default at a reinit, with the fftools series applied, is
# upstream's: the frames the old graph holds are lost (fps=10 gives 26
# frames where -reinit_drain 1 gives 30; the reference is the framecrc of
# FFmpeg without the series).  Ours, not the series': a FATE reference
# should not pin a loss.
FATE_FFMPEG-$(call FILTERFRAMECRC, TESTSRC2 SCALE FPS, LAVFI_INDEV WRAPPED_AVFRAME_DECODER) += fate-ffmpeg-reinit
fate-ffmpeg-reinit: CMD = framecrc $(FFMPEG_REINIT_INPUT) -vf fps=10

fate-dnn-torch: $(FATE_DNN_TORCH)
fate-dnn-torch-oracle: $(FATE_DNN_TORCH)
# the series' own tests (its FATE tests, and the fftools patch's), and
# fate-ffmpeg-reinit, which needs no Python either
fate-dnn-torch-samples: $(FATE_DNN_TORCH-yes) fate-ffmpeg-reinit fate-ffmpeg-reinit-drain
fate-dnn-torch-list:
	@mkdir -p tests/data
	@printf '%s\n' $(FATE_DNN_TORCH-yes) fate-ffmpeg-reinit fate-ffmpeg-reinit-drain $(FATE_DNN_TORCH) \
	    > tests/data/fate-dnn-torch.list

# Leak check under valgrind (make check-valgrind; slow, so not in
# fate-dnn-torch nor in a plain "make fate"): memcheck as FFmpeg's
# --toolchain=valgrind-memcheck runs it, with FFmpeg's suppressions and
# ours (tests/dnn/valgrind.supp), on a few tiny frames: any memory error or
# block definitely lost fails (valgrind exits with status 101).  The log
# is left in tests/data/fate/TEST.vglog.  Needs valgrind and ffmpeg_g.
DNNT_VG = valgrind --leak-check=full --show-leak-kinds=definite \
    --errors-for-leak-kinds=definite --error-exitcode=101 --num-callers=40 \
    --suppressions=$(SRC_PATH)/tests/fate-valgrind.supp \
    --suppressions=$(SRC_PATH)/tests/dnn/valgrind.supp \
    --log-file=tests/data/fate/$(@:fate-%=%).vglog
DNNT_VG_FFMPEG = $(DNNT_VG) $(TARGET_PATH)/ffmpeg$(PROGSSUF)_g$(EXESUF) \
    -nostdin -hide_banner -v error

define DNNT_VALGRIND
fate-dnn-torch-valgrind-$(1): CMD = $$(DNNT_VG_FFMPEG) \
    -f lavfi -i testsrc2=s=32x24:r=5 -frames:v 4 \
    -vf format=rgb24,$(DNNT_OPT)/conv.pt$(2) -f null -
fate-dnn-torch-valgrind-$(1): CMP = null
FATE_DNN_TORCH_VALGRIND += fate-dnn-torch-valgrind-$(1)
endef
$(eval $(call DNNT_VALGRIND,sync,:async=0))
$(eval $(call DNNT_VALGRIND,async,:async=1:nireq=2))

# A forward that raises mid-stream with four requests side by side: ffmpeg
# fails (status > 0, no signal, not valgrind's 101) and the teardown loses
# nothing.
fate-dnn-torch-valgrind-raise-mid: $(DNNT)/white-mid-rgb24.in
fate-dnn-torch-valgrind-raise-mid: CMD = $(DNNT_PY)/expect_error.py --not-status 101 \
    "raise_white: an all-white frame" $(DNNT_VG_FFMPEG) \
    -f rawvideo -pix_fmt rgb24 -s 32x24 -i $(TARGET_PATH)/$(DNNT)/white-mid-rgb24.in \
    -vf format=rgb24,$(DNNT_OPT)/raise_white.pt:async=1:nireq=4 -f null -
fate-dnn-torch-valgrind-raise-mid: CMP = null
FATE_DNN_TORCH_VALGRIND += fate-dnn-torch-valgrind-raise-mid

# The output ends after 3 of 20 frames while four requests run side by
# side (as when the user stops ffmpeg early): the graph is freed with
# forwards in flight, every worker joined, nothing lost.
fate-dnn-torch-valgrind-stop-early: CMD = $(DNNT_VG_FFMPEG) \
    -f lavfi -i testsrc2=s=32x24:r=5:d=4 \
    -vf format=rgb24,$(DNNT_OPT)/conv.pt:async=1:nireq=4 -frames:v 3 -f null -
fate-dnn-torch-valgrind-stop-early: CMP = null
FATE_DNN_TORCH_VALGRIND += fate-dnn-torch-valgrind-stop-early

# Batches of 3 on frames that change size twice: partly filled batches go
# at each drain of a graph and at the end.
fate-dnn-torch-valgrind-batch: $(DNNT)/resize/stamp
fate-dnn-torch-valgrind-batch: CMD = $(DNNT_VG_FFMPEG) \
    $(DNNT_RESIZE_reinit):async=1:nireq=6:batch_size=3 -f null -
fate-dnn-torch-valgrind-batch: CMP = null
FATE_DNN_TORCH_VALGRIND += fate-dnn-torch-valgrind-batch

# The API example, async, two sizes: the first graph is drained and freed
# at the size change, the second at the end, the filter's options included.
fate-dnn-torch-valgrind-api: $(DNNT_API_G) $(DNNT)/api-a.in $(DNNT)/api-b.in
fate-dnn-torch-valgrind-api: CMD = $(DNNT_VG) $(TARGET_PATH)/$(DNNT_API_G) \
    -o async=1 -o nireq=2 $(TARGET_PATH)/$(DNNT)/conv.pt - $(DNNT_API_IN)
fate-dnn-torch-valgrind-api: CMP = null
FATE_DNN_TORCH_VALGRIND += fate-dnn-torch-valgrind-api

# A stream that changes size twice, async: ffmpeg drains (-reinit_drain 1)
# and frees the old graph at each change (with requests in flight until
# the drain), and the last one at the end.
fate-dnn-torch-valgrind-reinit: $(DNNT)/resize/stamp
fate-dnn-torch-valgrind-reinit: CMD = $(DNNT_VG_FFMPEG) \
    $(DNNT_RESIZE_reinit):async=1:nireq=2 -f null -
fate-dnn-torch-valgrind-reinit: CMP = null
FATE_DNN_TORCH_VALGRIND += fate-dnn-torch-valgrind-reinit

$(FATE_DNN_TORCH_VALGRIND): ffmpeg$(PROGSSUF)$(EXESUF) tests/base64$(HOSTEXESUF) $(DNNT)/models.stamp
	@mkdir -p tests/data/fate
	@echo "TEST    $(@:fate-%=%)"
	$(Q)$(SRC_PATH)/tests/fate-run.sh $@ "" "" "$(TARGET_PATH)" '$(CMD)' '$(CMP)'

fate-dnn-torch-valgrind: $(FATE_DNN_TORCH_VALGRIND)
dnn-torch-valgrind-testlist:
	@mkdir -p tests/data
	@printf '%s\n' $(FATE_DNN_TORCH_VALGRIND) > tests/data/fate-dnn-torch-valgrind.list

