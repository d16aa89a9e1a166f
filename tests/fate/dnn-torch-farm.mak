# tools/farm.sh: a video cut at keyframes, its parts run by a filter one
# task each, joined; not part of the series (the tests run the project's
# tools).  tools/farm-test.sh says what each test checks.  The filter is
# dnn_processing with the samples' invert.pt.  fate-dnn-torch-farm-slurm
# installs Debian's slurm-wlm and munge where they are missing (as root)
# and runs the tasks as one job array on a Slurm cluster of this machine;
# where it cannot, it fails and says why.
ifneq ($(DNNT_TOP),)
DNNT_FARM = sh $(DNNT_TOP)/tools/farm-test.sh

define DNNT_FARM_TEST
fate-dnn-torch-farm-$(1): ffmpeg$(PROGSSUF)$(EXESUF) ffprobe$(PROGSSUF)$(EXESUF)
fate-dnn-torch-farm-$(1): CMD = $(DNNT_FARM) $(1) $(TARGET_PATH)/$(DNNT)/farm-$(1) \
    $(TARGET_PATH) $(DNNT_TOP)/fate-suite/dnn-torch/invert.pt
fate-dnn-torch-farm-$(1): CMP = null
FATE_DNN_TORCH_FARM += fate-dnn-torch-farm-$(1)
endef

$(foreach t,join missing truncated rerun slurm,$(eval $(call DNNT_FARM_TEST,$(t))))

FATE_DNN_TORCH += $(FATE_DNN_TORCH_FARM)
fate-dnn-torch-oracle: $(FATE_DNN_TORCH_FARM)
fate-dnn-torch: $(FATE_DNN_TORCH_FARM)
fate-dnn-torch-farm: $(FATE_DNN_TORCH_FARM)
endif
