# FATE tests of the torch DNN backend (libavfilter/dnn/dnn_backend_torch.cpp)
# on the TorchScript models in $(TARGET_SAMPLES)/dnn-torch.  Every model
# there computes exactly (sign flips, one-hot convolutions, nearest
# upsampling), so the framecrc references hold on any CPU and in float16.
#   invert  1 - x, a model without parameters
#   shift   each channel from the previous one, one pixel right and down
#   shift1  the same on one channel (gray, the Y plane of YUV)
#   up2     shift, then x2 nearest upsampling (output larger than input)
#   win_first  a temporal model (window=N): the first frame of its window,
#              so frame t - N/2 with center, t - N + 1 with last, the first
#              frame of the stream repeated before it

DNN_TORCH_MODEL = dnn_processing=dnn_backend=torch:model=$(TARGET_SAMPLES)/dnn-torch
DNN_TORCH_NEEDS = TESTSRC2_FILTER FORMAT_FILTER DNN_PROCESSING_FILTER \
                  RAWVIDEO_ENCODER FRAMECRC_MUXER PIPE_PROTOCOL
DNN_TORCH_DEPS  = $(call ALLYES, $(DNN_TORCH_NEEDS))

# $(1) test name, $(2) pixel format, $(3) model, $(4) more filter options,
# $(5) the test whose reference it shares (the same frames must come out)
define FATE_DNN_TORCH_TEST
FATE_DNN_TORCH-$(DNN_TORCH_DEPS) += fate-dnn-torch-$(1)
fate-dnn-torch-$(1): CMD = framecrc -lavfi testsrc2=s=64x48:r=5:d=1,format=$(2),$(DNN_TORCH_MODEL)/$(3).pt$(4) -pix_fmt $(2)
$(if $(5),fate-dnn-torch-$(1): REF = $(SRC_PATH)/tests/ref/fate/dnn-torch-$(5))
endef

$(eval $(call FATE_DNN_TORCH_TEST,invert-rgb24,rgb24,invert,))
$(eval $(call FATE_DNN_TORCH_TEST,invert-bgr24-sync,bgr24,invert,:async=0))

# frames stored bottom-up (negative linesizes, as vflip hands them out) on
# both sides of the filter: invert is pointwise, so vflip, invert, vflip
# gives the frames of invert-rgb24, with and without async
FATE_DNN_TORCH-$(call ALLYES, VFLIP_FILTER $(DNN_TORCH_NEEDS)) += fate-dnn-torch-invert-rgb24-vflip fate-dnn-torch-invert-rgb24-vflip-sync
fate-dnn-torch-invert-rgb24-vflip: CMD = framecrc -lavfi testsrc2=s=64x48:r=5:d=1,format=rgb24,vflip,$(DNN_TORCH_MODEL)/invert.pt,vflip -pix_fmt rgb24
fate-dnn-torch-invert-rgb24-vflip-sync: CMD = framecrc -lavfi testsrc2=s=64x48:r=5:d=1,format=rgb24,vflip,$(DNN_TORCH_MODEL)/invert.pt:async=0,vflip -pix_fmt rgb24
fate-dnn-torch-invert-rgb24-vflip fate-dnn-torch-invert-rgb24-vflip-sync: REF = $(SRC_PATH)/tests/ref/fate/dnn-torch-invert-rgb24

$(eval $(call FATE_DNN_TORCH_TEST,shift-rgb24,rgb24,shift,))
$(eval $(call FATE_DNN_TORCH_TEST,shift-bgr24-nireq2,bgr24,shift,:async=1:nireq=2))
$(eval $(call FATE_DNN_TORCH_TEST,shift-rgb24-sync,rgb24,shift,:async=0,shift-rgb24))
$(eval $(call FATE_DNN_TORCH_TEST,shift-rgb24-fp16,rgb24,shift,:precision=fp16,shift-rgb24))
$(eval $(call FATE_DNN_TORCH_TEST,shift-rgb24-nchw,rgb24,shift,:channels_last=0,shift-rgb24))
$(eval $(call FATE_DNN_TORCH_TEST,shift-rgb24-batch2,rgb24,shift,:batch_size=2,shift-rgb24))
$(eval $(call FATE_DNN_TORCH_TEST,shift-rgb24-threads1,rgb24,shift,:threads=1,shift-rgb24))
$(eval $(call FATE_DNN_TORCH_TEST,shift1-gray8,gray,shift1,))
$(eval $(call FATE_DNN_TORCH_TEST,shift1-yuv420p,yuv420p,shift1,:async=0))
$(eval $(call FATE_DNN_TORCH_TEST,up2-rgb24,rgb24,up2,))
$(eval $(call FATE_DNN_TORCH_TEST,window3-rgb24,rgb24,win_first,:window=3))
$(eval $(call FATE_DNN_TORCH_TEST,window3-last-rgb24-sync,rgb24,win_first,:window=3:window_anchor=last:async=0))
$(eval $(call FATE_DNN_TORCH_TEST,window5-gray8-nireq2,gray,win_first,:window=5:async=1:nireq=2))

# formats from the model: planar gbrp frames reach the 3-channel shift
# model as rgb24, reordered (exactly) by the scaler ffmpeg inserts in front
# of the filter, so the frames of shift-rgb24 come out
FATE_DNN_TORCH-$(call ALLYES, SCALE_FILTER $(DNN_TORCH_NEEDS)) += fate-dnn-torch-shift-from-gbrp
fate-dnn-torch-shift-from-gbrp: CMD = framecrc -auto_conversion_filters -lavfi testsrc2=s=64x48:r=5:d=1,format=gbrp,$(DNN_TORCH_MODEL)/shift.pt -pix_fmt rgb24
fate-dnn-torch-shift-from-gbrp: REF = $(SRC_PATH)/tests/ref/fate/dnn-torch-shift-rgb24

FATE_SAMPLES_FFMPEG-$(CONFIG_LIBTORCH) += $(FATE_DNN_TORCH-yes)
fate-dnn-torch: $(FATE_DNN_TORCH-yes)
