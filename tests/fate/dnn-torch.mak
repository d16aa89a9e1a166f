# FATE tests of the LibTorch DNN backend (libavfilter/dnn/dnn_backend_torch.cpp).
#
# Models come from tests/dnn/models.py (fixed seeds); references are computed
# independently by PyTorch (tests/dnn/oracle.py) on the very frames ffmpeg
# reads, or by another FFmpeg filter.  TORCH_PYTHON names a Python with torch.

TORCH_PYTHON ?= python3
DNNT      = tests/data/dnn-torch
DNNT_PY   = $(TORCH_PYTHON) $(SRC_PATH)/tests/dnn
DNNT_FF   = ./ffmpeg$(PROGSSUF)$(EXESUF) -nostdin -hide_banner -v error
DNNT_OPT  = dnn_processing=dnn_backend=torch:model=$(TARGET_PATH)/$(DNNT)

$(DNNT)/models.stamp: $(SRC_PATH)/tests/dnn/models.py
	@mkdir -p $(DNNT)
	$(DNNT_PY)/models.py $(DNNT)
	@touch $@

# Oracle test: raw frames of testsrc2 through the model, against PyTorch.
# $(1) test name, $(2) model, $(3) pixfmt, $(4) width, $(5) height,
# $(6) extra filter options, $(7) tiny_psnr unit, $(8) allowed MAXDIFF
define DNNT_ORACLE
$(DNNT)/$(1).in: ffmpeg$(PROGSSUF)$(EXESUF)
	@mkdir -p $(DNNT)
	$(DNNT_FF) -f lavfi -i testsrc2=s=$(4)x$(5):r=5 -frames:v 3 \
	    -vf format=$(3) -f rawvideo -y $$@
$(DNNT)/$(1).ref: $(DNNT)/$(1).in $(DNNT)/models.stamp $(SRC_PATH)/tests/dnn/oracle.py
	$(DNNT_PY)/oracle.py $(DNNT)/$(2).pt $(3) $(4) $(5) $$< $$@
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

FATE_FFMPEG-$(CONFIG_LIBTORCH) += $(FATE_DNN_TORCH)

fate-dnn-torch: $(FATE_DNN_TORCH)
dnn-torch-testlist:
	@mkdir -p tests/data
	@printf '%s\n' $(FATE_DNN_TORCH) > tests/data/fate-dnn-torch.list
