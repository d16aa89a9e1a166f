"""Checkpoints of published architectures, as tools/export-model.py finds
them: small configurations of four spandrel families with seeded random
weights, saved as plain state dicts, and three files it must refuse.

    python3 spandrel_models.py DIR

compact.pth    SRVGGNetCompact (Real-ESRGAN's video net), RGB, x4
esrgan.pth     ESRGAN (RRDB blocks), RGB, x2
span.safetensors  SPAN, RGB, x2, as safetensors
dncnn.pth      DnCNN (a denoiser), 1 channel, x1: gray and the Y plane
unknown.pth    a state dict of no architecture
truncated.pth  the first half of compact.pth
pickle.pth     a pickle that would call a function when loaded
"""
import os
import pickle
import sys

import torch
from safetensors.torch import save_file
from spandrel.architectures.Compact import Compact
from spandrel.architectures.DnCNN import DnCNN
from spandrel.architectures.ESRGAN import ESRGAN
from spandrel.architectures.SPAN import SPAN


class Calls:
    """Unpickled, this would call print(): what weights_only refuses."""

    def __reduce__(self):
        return (print, ("export-model unpickled code",))


def weights(model):
    """Seeded weights, small enough that the output is not all clipped."""
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn_like(p) * 0.1)
    return model.state_dict()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(1)
    nets = {
        "compact.pth": Compact(num_in_ch=3, num_out_ch=3, num_feat=16,
                               num_conv=4, upscale=4),
        "esrgan.pth": ESRGAN(in_nc=3, out_nc=3, num_filters=16, num_blocks=1, scale=2),
        "span.safetensors": SPAN(num_in_ch=3, num_out_ch=3, feature_channels=16, upscale=2),
        "dncnn.pth": DnCNN(in_nc=1, out_nc=1, nc=16, nb=4),
    }
    for name, net in nets.items():
        sd = weights(net)
        path = os.path.join(out, name)
        if name.endswith(".safetensors"):
            save_file({k: v.contiguous() for k, v in sd.items()}, path)
        else:
            torch.save(sd, path)
    torch.save({"encoder.stem.weight": torch.randn(8, 3, 3, 3)},
               os.path.join(out, "unknown.pth"))
    data = open(os.path.join(out, "compact.pth"), "rb").read()
    open(os.path.join(out, "truncated.pth"), "wb").write(data[: len(data) // 2])
    with open(os.path.join(out, "pickle.pth"), "wb") as f:
        pickle.dump({"w": Calls()}, f)


if __name__ == "__main__":
    main()
