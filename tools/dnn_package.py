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
                      MIN..MAX for a dynamic dimension: 1x3x16..2160x16..3840

compile_package() writes them from the example input and the dynamic
dimensions given to torch.export; a package made another way carries them
when the same dictionary is passed as inductor_configs["aot_inductor.metadata"].
"""
import torch

DTYPES = {torch.float32: "float32", torch.float16: "float16",
          torch.bfloat16: "bfloat16"}


def input_metadata(example, dims):
    """The keys for one input: example, the tensor given to torch.export;
    dims, {axis: torch.export.Dim} of its dynamic axes."""
    if example.dtype not in DTYPES:
        raise SystemExit(f"input dtype {example.dtype} is not float32, float16 or bfloat16")
    sizes = [f"{dims[d].min}..{dims[d].max}" if d in dims else str(n)
             for d, n in enumerate(example.shape)]
    nhwc = example.dim() == 4 and not example.is_contiguous() and \
        example.is_contiguous(memory_format=torch.channels_last)
    return {"dnn.input.dtype": DTYPES[example.dtype],
            "dnn.input.layout": "nhwc" if nhwc else "nchw",
            "dnn.input.shape": "x".join(sizes)}


def compile_package(model, example, dims, path):
    """torch.export of model on example with dims dynamic, AOTInductor
    compiled into the package path, with the metadata above."""
    ep = torch.export.export(model, (example,), dynamic_shapes=(dims,))
    meta = input_metadata(example, dims)
    torch._inductor.aoti_compile_and_package(
        ep, package_path=path, inductor_configs={"aot_inductor.metadata": meta})
    return meta
