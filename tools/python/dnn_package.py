# AOTInductor packages for the torch DNN backend, with the metadata it reads
#
# This file is part of FFmpeg.
#
# FFmpeg is free software; you can redistribute it and/or
# modify it under the terms of the GNU Lesser General Public
# License as published by the Free Software Foundation; either
# version 2.1 of the License, or (at your option) any later version.
#
# FFmpeg is distributed in the hope that it will be useful,
# but WITHOUT ANY WARRANTY; without even the implied warranty of
# MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
# Lesser General Public License for more details.
#
# You should have received a copy of the GNU Lesser General Public
# License along with FFmpeg; if not, write to the Free Software
# Foundation, Inc., 51 Franklin Street, Fifth Floor, Boston, MA 02110-1301 USA

"""AOTInductor packages for ffmpeg's torch backend.

A package's compiled code does not check its input unless the process
environment asks it to, so the backend checks every frame against what the
package says it takes, read from the package's metadata (AOTInductor's
aot_inductor.metadata, which the package loader returns), never from its
generated code.  Three keys, all strings:

    dnn.input.dtype   float32, float16 or bfloat16
    dnn.input.layout  nchw, or nhwc for a package exported from a
                      channels-last input
    dnn.input.shape   batch x channels x height x width, each a number or
                      MIN..MAX for a dynamic dimension: 1x3x16..2160x16..3840;
                      a temporal model (the filter's window=N) takes
                      batch x N x channels x height x width, N fixed:
                      1x5x3x16..2160x16..3840

A window's channels-last layout is the one the backend assembles, height x
width x N x channels in memory (window_like() makes it): the compiled code
reads its input by the strides of the example it was exported from.

A package may hold several models (AOTInductor keys them by name): "model",
the dynamic one, and one per fixed frame size, which "model" lists in a
fourth key, dnn.models ("s960x540,s1920x1080").  The backend runs a frame
on the model of its size, else on "model".

compile_package() writes them from the example input and the dynamic
dimensions given to torch.export; a package made another way carries them
when the same dictionary is passed as inductor_configs["aot_inductor.metadata"].

In Python, with the module to export and an example frame:

    import sys; sys.path.insert(0, "tools/python")
    import torch
    from dnn_package import compile_package
    h = torch.export.Dim("h", min=8, max=1080)
    w = torch.export.Dim("w", min=8, max=1920)
    compile_package(model.eval(), torch.rand(1, 3, 540, 960), {2: 2 * h, 3: 2 * w},
                    "model.pt2", sizes=[(960, 540)])

then: ffmpeg -i in -vf dnn_processing=dnn_backend=torch:model=model.pt2:aoti=1 out
"""
import time

import torch

DTYPES = {torch.float32: "float32", torch.float16: "float16",
          torch.bfloat16: "bfloat16"}


def input_metadata(example, dims):
    """The keys for one input: example, the tensor given to torch.export;
    dims, {axis: torch.export.Dim} of its dynamic axes (a Dim, or an
    integer times a Dim for sizes that are multiples of it)."""
    if example.dtype not in DTYPES:
        raise SystemExit(f"input dtype {example.dtype} is not float32, float16 or bfloat16")
    sizes = ["%d..%d" % dim_range(dims[d]) if d in dims else str(n)
             for d, n in enumerate(example.shape)]
    if example.dim() == 5:
        nhwc = not example.is_contiguous() and is_window_cl(example)
        if not nhwc and not example.is_contiguous():
            raise SystemExit("the example window is neither contiguous nor in window_like()'s layout")
    else:
        nhwc = example.dim() == 4 and not example.is_contiguous() and \
            example.is_contiguous(memory_format=torch.channels_last)
    return {"dnn.input.dtype": DTYPES[example.dtype],
            "dnn.input.layout": "nhwc" if nhwc else "nchw",
            "dnn.input.shape": "x".join(sizes)}


def dim_range(dim):
    """(min, max) of a torch.export dimension, or of a multiple of one."""
    if hasattr(dim, "min"):
        return dim.min, dim.max
    # a derived dimension k * D: its root's range times k
    k = dim.fn(1)
    return dim.root.min * k, dim.root.max * k


def window_like(x):
    """x, 1 x N x C x H x W, in the backend's channels-last window layout:
    H x W x N x C in memory."""
    return x.permute(0, 3, 4, 1, 2).contiguous().permute(0, 3, 4, 1, 2)


def is_window_cl(x):
    """Whether a 5-D x has window_like()'s strides."""
    b, n, c, h, w = x.shape
    return x.stride() == (h * w * n * c, c, 1, w * n * c, n * c)


def like(example, height, width):
    """An input of another size, of example's dtype, device and layout."""
    x = torch.rand(*example.shape[:-2], height, width,
                   dtype=example.dtype, device=example.device)
    if not example.is_contiguous():
        x = window_like(x) if x.dim() == 5 else x.contiguous(memory_format=torch.channels_last)
    return x


def compile_model(model, example, dims, meta, say=print):
    """torch.export and AOTInductor of one model: its files for package_aoti."""
    start = time.time()
    ep = torch.export.export(model, (example,), dynamic_shapes=(dims,) if dims else None)
    options = {"aot_inductor.package": True, "aot_inductor.metadata": meta}
    if dims and example.dim() == 4:
        # Inductor leaves convolutions' layout alone when sizes are dynamic
        # (torch/_inductor/graph.py, decide_layout_opt); forced, the dynamic
        # compact net ran 384 fps at 960x540 on an H200 instead of 262.  Not
        # for windows (5-D): a CUDA window package compiled so on 720p failed
        # there (Inductor's autotuning could not build a Triton launcher)
        options["force_layout_optimization"] = True
    files = torch._inductor.aot_compile(ep.module(), (example,), options=options)
    say("  compiled %s in %.0f s" % (meta["dnn.input.shape"], time.time() - start))
    return files


def compile_package(model, example, dims, path, sizes=(), say=print):
    """A package at path: a model compiled for each (width, height) of
    sizes, and one with dims dynamic, compiled on example ("model").
    Returns the metadata of "model"."""
    from torch._inductor.package import package_aoti

    files, names = {}, []
    for width, height in sizes:
        name = "s%dx%d" % (width, height)
        x = like(example, height, width)
        files[name] = compile_model(model, x, {}, input_metadata(x, {}), say)
        names.append(name)
    meta = input_metadata(example, dims)
    if names:
        meta["dnn.models"] = ",".join(names)
    files["model"] = compile_model(model, example, dims, meta, say)
    package_aoti(path, files)
    return meta
