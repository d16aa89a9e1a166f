"""Where tools/export-model.py takes a model from: a checkpoint of a
published architecture (read by spandrel, loaded as weights only), a
module of the user's (FILE.py:Class or FILE.py:Class(key=value, ...)), or
the demo (a sharpening filter).  load() gives the module, in eval mode on
the CPU in float32, and what is known of it; every failure is a
SourceError with one line to print.

A temporal model (the filter's window=N) takes 1 x N x C x H x W, N frames
in time order, and returns 1 x C x kH x kW: only a module of the user's,
since spandrel's architectures and the demo take single images.
"""
import ast
import importlib.util
import os
import pickle

import torch
import torch.nn.functional as F
from torch import nn

CHECKPOINTS = (".pth", ".pt", ".ckpt", ".safetensors")


class SourceError(Exception):
    pass


class Sharpen(nn.Module):
    """The demo: an unsharp mask, a fixed 3x3 kernel on each channel."""

    def __init__(self, amount: float = 1.0):
        super().__init__()
        k = torch.tensor([[0.0, -1.0, 0.0], [-1.0, 4.0, -1.0], [0.0, -1.0, 0.0]])
        identity = torch.zeros(3, 3)
        identity[1, 1] = 1.0
        self.register_buffer("weight", (identity + amount * k).expand(3, 1, 3, 3).clone())

    def forward(self, x):
        x = F.pad(x, (1, 1, 1, 1), mode="replicate")
        return F.conv2d(x, self.weight, groups=3).clamp(0.0, 1.0)


class Clamped(nn.Module):
    """The backend's contract: the output in [0, 1]."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x).clamp(0.0, 1.0)


def state_dict(path):
    """A checkpoint's tensors, never running code from the file."""
    try:
        if path.lower().endswith(".safetensors"):
            from safetensors.torch import load_file
            return load_file(path)
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise SourceError(f"{path}: not a plain checkpoint (unpickling it would run code "
                          "or build objects other than tensors); only weights are loaded")
    except (OSError, RuntimeError, EOFError, ValueError) as e:
        raise SourceError(f"{path}: cannot read it as a checkpoint: "
                          f"{str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}")


def from_checkpoint(path):
    try:
        import spandrel
    except ImportError:
        raise SourceError("spandrel is not installed in this Python: ./configure installs "
                          "it in build/venv (run tools/export-model.py with build/venv/bin/python)")
    sd = state_dict(path)
    if not isinstance(sd, dict) or not sd:
        raise SourceError(f"{path}: the checkpoint holds no state dict")
    try:
        desc = spandrel.ModelLoader().load_from_state_dict(spandrel.canonicalize_state_dict(sd))
    except spandrel.UnsupportedModelError:
        raise SourceError(f"{path}: no architecture that spandrel {spandrel.__version__} "
                          "knows matches this checkpoint")
    except Exception as e:  # a known architecture that fails on these weights
        raise SourceError(f"{path}: spandrel could not build the model: {e}")
    if not isinstance(desc, spandrel.ImageModelDescriptor):
        raise SourceError(f"{path}: a {desc.architecture.name} model takes more than "
                          "one image (an image and a mask), not a frame")
    req = desc.size_requirements
    info = {"architecture": desc.architecture.name, "scale": desc.scale,
            "channels": desc.input_channels, "out_channels": desc.output_channels,
            "minimum": req.minimum, "multiple_of": req.multiple_of, "square": req.square,
            "fp16": desc.supports_half, "bf16": desc.supports_bfloat16}
    return Clamped(desc.model), info


def parse_class(spec):
    """'Class' or 'Class(key=value, ...)' with literal values."""
    try:
        call = ast.parse(spec, mode="eval").body
    except SyntaxError:
        raise SourceError(f"'{spec}': not a class name or a call Class(key=value, ...)")
    if isinstance(call, ast.Name):
        return call.id, {}
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.args:
        raise SourceError(f"'{spec}': give keyword arguments only, Class(key=value, ...)")
    try:
        return call.func.id, {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    except ValueError:
        raise SourceError(f"'{spec}': the values of the keyword arguments must be literals")


def from_module(source, weights):
    path, spec = source.split(":", 1)
    name, kwargs = parse_class(spec)
    if not os.path.isfile(path):
        raise SourceError(f"{path}: no such file")
    mod_spec = importlib.util.spec_from_file_location("user_model", path)
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    cls = getattr(mod, name, None)
    if not isinstance(cls, type) or not issubclass(cls, nn.Module):
        raise SourceError(f"{path} has no nn.Module class {name}")
    model = cls(**kwargs)
    if weights:
        sd = state_dict(weights)
        try:
            model.load_state_dict(sd.get("state_dict", sd) if isinstance(sd, dict) else sd)
        except RuntimeError as e:
            raise SourceError(f"{weights}: the weights do not fit {name}: "
                              f"{str(e).splitlines()[0]}")
    return model, {"architecture": f"{name} ({os.path.basename(path)})"}


def probe(model, info, window=1):
    """Scale and channels of a module by running it on a small frame (a
    window of them for window > 1)."""
    if "scale" in info:
        return info
    side = 64
    frames = (window,) if window > 1 else ()
    for channels in (3, 1):
        shape = (1, *frames, channels, side, side)
        try:
            with torch.no_grad():
                out = model(torch.rand(shape))
        except Exception:
            continue
        if out.dim() != 4 or out.shape[2] % side or out.shape[2] != out.shape[3]:
            raise SourceError(f"{info['architecture']}: a {'x'.join(map(str, shape))} input "
                              f"gives {tuple(out.shape)}, not 1xCx(k*H)x(k*W)")
        info.update(scale=out.shape[2] // side, channels=channels, out_channels=out.shape[1],
                    minimum=1, multiple_of=1, square=False, fp16=True, bf16=True)
        return info
    what = "x".join(map(str, frames + ("C", side, side)))
    raise SourceError(f"{info['architecture']}: fails on a 1x{what} input in [0, 1], "
                      "C 3 and 1" + (f" (--window {window}: 1 x N x C x H x W)" if frames else ""))


def load(source, weights=None, window=1):
    """(module, info): info has architecture, scale, channels,
    out_channels, minimum, multiple_of, square, parameters, window."""
    if source == "demo":
        model, info = Sharpen(), {"architecture": "demo (sharpen)"}
    elif source.lower().endswith(CHECKPOINTS):
        if not os.path.isfile(source):
            raise SourceError(f"{source}: no such file")
        model, info = from_checkpoint(source)
    elif ".py:" in source:
        model, info = from_module(source, weights)
    else:
        raise SourceError(f"'{source}': give a checkpoint ({', '.join(CHECKPOINTS)}), "
                          "FILE.py:Class or demo")
    if window > 1 and ".py:" not in source:
        raise SourceError(f"--window {window}: {info['architecture']} takes single images, "
                          "not a window of frames; --window is for a temporal module of "
                          "yours, FILE.py:Class")
    model = model.eval().float()
    info = probe(model, info, window)
    info["window"] = window
    if info["channels"] not in (1, 3) or info["out_channels"] != info["channels"]:
        raise SourceError(f"{info['architecture']}: takes {info['channels']} channels and "
                          f"returns {info['out_channels']}; the filter feeds 3 (RGB) or 1 "
                          "(gray, the Y plane) and takes the same back")
    info["parameters"] = sum(p.numel() for p in model.parameters())
    return model, info
