/*
 * LibTorch DNN backend: AOTInductor packages
 *
 * This file is part of FFmpeg.
 *
 * FFmpeg is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License as published by the Free Software Foundation; either
 * version 2.1 of the License, or (at your option) any later version.
 *
 * FFmpeg is distributed in the hope that it will be useful,
 * but WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
 * Lesser General Public License for more details.
 *
 * You should have received a copy of the GNU Lesser General Public
 * License along with FFmpeg; if not, write to the Free Software
 * Foundation, Inc., 51 Franklin Street, Fifth Floor, Boston, MA 02110-1301 USA
 */

/**
 * @file
 * A .pt2 package holds a model compiled ahead of time for one kind of
 * device, with the input shapes, dtype and strides it was exported for.
 * Its compiled code does not check its input (unless the process
 * environment asks it to), and reads a frame of another size out of
 * bounds.  So every input is checked here against what the package says
 * it takes, in its metadata (AOTInductor's aot_inductor.metadata, written
 * at compile time): dnn.input.dtype (float32, float16 or bfloat16),
 * dnn.input.layout (nchw or nhwc) and dnn.input.shape (a size or MIN..MAX
 * per dimension: 1x3x16..2160x16..3840).  A package without them is
 * refused at load.
 *
 * A package of a temporal model (the backend's window option) takes 5-D
 * input, 1 x N x C x H x W with N fixed: 1x5x3x16..2160x16..3840.  Its
 * nhwc layout is the one the backend's window unit assembles, H x W x N x
 * C in memory (frames stacked along C are a view); an input of another
 * window, or 4-D input for it (5-D for a 4-D package), is refused by the
 * check of every input, so by the backend's probe before the first frame.
 *
 * A package may hold several models, each compiled for its own input
 * sizes: "model", and those that its metadata names in dnn.models (a
 * comma-separated list, the exporter's models for fixed frame sizes).
 * Each input runs on the first of the named ones that takes it, else on
 * "model".
 */

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

extern "C" {
#include "libavutil/error.h"
#include "libavutil/log.h"
}

#include "dnn_backend_torch_aoti.h"

#include <cinttypes>
#include <cstdio>
#include <atomic>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

typedef std::unordered_map<std::string, std::string> THMetadata;

/* One model of a package. */
struct THAotiModel {
    std::string name;
    torch::inductor::AOTIModelPackageLoader *loader = NULL;
    int64_t lo[5], hi[5];           ///< input sizes it takes, per dimension
};

struct THAoti {
    std::string path;
    void *log_ctx;
    std::vector<THAotiModel> models; ///< the named ones first, "model" last
    std::atomic<int64_t> last{ -1 }; ///< the model and size that ran last (for the log)
    std::string kind;               ///< the package's device: cpu or cuda
    c10::DeviceType type;
    int index;                      ///< the device it is loaded on
    torch::ScalarType dtype = torch::ScalarType::Undefined; ///< of its input
    int channels_last;              ///< NHWC-strided input: 1, NCHW: 0
    int dims = 0;                   ///< of its input: 4, or 5 for a window
};

int ff_dnn_th_aoti_is_package(const char *path)
{
    /* TorchScript files are zip archives too: a package has AOTInductor's records */
    try {
        caffe2::serialize::PyTorchStreamReader reader(path);
        for (const std::string &name : reader.getAllRecords())
            if (name.rfind("data/aotinductor/", 0) == 0)
                return 1;
    } catch (const std::exception &) {
        /* not an archive: the TorchScript loader says what it is */
    }
    return 0;
}

/*
 * "1x3x16..2160x16..3840": a size or MIN..MAX per dimension, 4 of them, or
 * 5 with a fixed window (1x5x3x16..2160x16..3840).  Returns the count.
 */
static int th_parse_shape(THAotiModel *a, const std::string &shape)
{
    const char *p = shape.c_str();
    int d;

    for (d = 0; d < 5 && *p; d++) {
        int n = 0;
        if (sscanf(p, "%" SCNd64 "..%" SCNd64 "%n", &a->lo[d], &a->hi[d], &n) == 2) {
            p += n;
        } else if (sscanf(p, "%" SCNd64 "%n", &a->lo[d], &n) == 1) {
            a->hi[d] = a->lo[d];
            p += n;
        } else {
            return AVERROR(EINVAL);
        }
        if (a->lo[d] < 1 || a->hi[d] < a->lo[d] || (*p != 'x' && *p))
            return AVERROR(EINVAL);
        p += *p == 'x';
    }
    if (d < 4 || *p || p[-1] == 'x' || (d == 5 && a->lo[1] != a->hi[1]))
        return AVERROR(EINVAL);
    return d;
}

/*
 * The input a model's metadata describes; an error names the key.  The
 * first model read ("model") sets the package's dtype, layout, dimensions
 * and window; the others must have the same.
 */
static int th_read_input(THAoti *a, THAotiModel *m, void *log_ctx, THMetadata &meta)
{
    static const struct { const char *name; torch::ScalarType type; } types[] = {
        { "float32", torch::kFloat32 }, { "float16", torch::kHalf },
        { "bfloat16", torch::kBFloat16 },
    };
    const std::string &dtype = meta["dnn.input.dtype"], &layout = meta["dnn.input.layout"];
    torch::ScalarType type = torch::ScalarType::Undefined;
    int first = a->dtype == torch::ScalarType::Undefined;
    const char *bad = NULL;
    int dims = 0;

    for (const auto &t : types)
        if (dtype == t.name)
            type = t.type;
    if (type == torch::ScalarType::Undefined || (!first && type != a->dtype))
        bad = "dnn.input.dtype";
    else if ((layout != "nhwc" && layout != "nchw") ||
             (!first && (layout == "nhwc") != a->channels_last))
        bad = "dnn.input.layout";
    else if ((dims = th_parse_shape(m, meta["dnn.input.shape"])) < 0 ||
             (!first && dims != a->dims) ||     /* "model", read first, sets N */
             (dims == 5 && a->models.back().lo[1] != m->lo[1]))
        bad = "dnn.input.shape";
    if (!bad) {
        a->dtype = type;
        a->channels_last = layout == "nhwc";
        a->dims = dims;
        return 0;
    }
    av_log(log_ctx, AV_LOG_ERROR, "'%s': the metadata of the package's model '%s' has "
           "no valid %s (compile it with aot_inductor.metadata holding dnn.input.dtype, "
           "dnn.input.layout and dnn.input.shape, the same dtype, layout, dimensions "
           "and window for every model)\n", a->path.c_str(), m->name.c_str(), bad);
    return AVERROR(EINVAL);
}

/* Where the package runs: its kind, on the index asked for (CUDA: 0 if none). */
static int th_pick_device(THAoti *a, void *log_ctx, bool given, c10::Device *device)
{
    const char *path = a->path.c_str();

    if (a->kind == "cpu") {
        if (!device->is_cpu()) {
            av_log(log_ctx, AV_LOG_ERROR, "'%s' is an AOTInductor package compiled for "
                   "the CPU; it cannot run on %s: drop the device option\n", path,
                   device->str().c_str());
            return AVERROR(EINVAL);
        }
        a->type = c10::DeviceType::CPU;
        a->index = -1;
        return 0;
    }
    if (a->kind != "cuda" || (given && !device->is_cuda())) {
        av_log(log_ctx, AV_LOG_ERROR, "'%s' is an AOTInductor package compiled for %s; "
               "it cannot run on %s%s\n", path, a->kind.c_str(), device->str().c_str(),
               a->kind == "cuda" ? ": use device=cuda or drop the device option" : "");
        return AVERROR(EINVAL);
    }
    if (!torch::cuda::is_available()) {
        av_log(log_ctx, AV_LOG_ERROR, "'%s' is an AOTInductor package compiled for "
               "CUDA, and LibTorch finds no CUDA device here\n", path);
        return AVERROR(ENODEV);
    }
    a->type = c10::DeviceType::CUDA;
    a->index = device->is_cuda() && device->has_index() ? device->index() : 0;
    *device = c10::Device(a->type, a->index);
    return 0;
}

/*
 * One runner per loader (a loader runs as many forwards at once as it has
 * runners): the backend runs a package one forward at a time, on one
 * worker, since its CPU kernels take the thread count it was compiled for.
 */
static void th_new_loaders(THAoti *a)
{
    const bool cuda = a->type == c10::DeviceType::CUDA;

    for (THAotiModel &m : a->models) {
        /* made before the old one goes: if it throws, m.loader stays valid */
        auto *loader = new torch::inductor::AOTIModelPackageLoader(
            a->path, m.name, false, 1, cuda ? (c10::DeviceIndex)a->index : -1);
        delete m.loader;
        m.loader = loader;
    }
}

/* The models of the package: those that "model" names, then "model". */
static int th_read_models(THAoti *a, void *log_ctx, THMetadata &meta)
{
    std::stringstream names(meta["dnn.models"]);
    std::string name;
    int ret;

    while (std::getline(names, name, ','))
        if (!name.empty() && name != "model")
            a->models.push_back(THAotiModel{ name });
    a->models.push_back(THAotiModel{ "model" });
    ret = th_read_input(a, &a->models.back(), log_ctx, meta);
    for (size_t i = 0; ret >= 0 && i + 1 < a->models.size(); i++) {
        THMetadata m = torch::inductor::AOTIModelPackageLoader::load_metadata_from_package(
            a->path, a->models[i].name);
        if (m["AOTI_DEVICE_KEY"] != a->kind) {
            av_log(log_ctx, AV_LOG_ERROR, "'%s': the package's model '%s' is compiled "
                   "for %s, not %s as 'model' is\n", a->path.c_str(),
                   a->models[i].name.c_str(), m["AOTI_DEVICE_KEY"].c_str(), a->kind.c_str());
            return AVERROR(EINVAL);
        }
        ret = th_read_input(a, &a->models[i], log_ctx, m);
    }
    return ret;
}

int ff_dnn_th_aoti_load(THAoti **paoti, void *log_ctx, const char *path,
                        bool device_given, c10::Device *device)
{
    THAoti *a = new THAoti();
    THMetadata meta;
    int ret;

    *paoti = a;
    a->path = path;
    a->log_ctx = log_ctx;
    meta = torch::inductor::AOTIModelPackageLoader::load_metadata_from_package(path, "model");
    a->kind = meta["AOTI_DEVICE_KEY"];
    ret = th_pick_device(a, log_ctx, device_given, device);
    if (ret < 0 || (ret = th_read_models(a, log_ctx, meta)) < 0)
        return ret;
    th_new_loaders(a);
    for (const THAotiModel &m : a->models) {
        const int h = a->dims - 2, w = a->dims - 1;
        char window[32] = "";
        if (a->dims == 5)
            snprintf(window, sizeof(window), "%" PRId64 "x", m.lo[1]);
        av_log(log_ctx, AV_LOG_VERBOSE, "AOTInductor package for %s, model '%s', input %s, "
               "1x%s%" PRId64 "xHxW%s, H %" PRId64 "..%" PRId64 ", W %" PRId64 "..%" PRId64 "\n",
               a->kind.c_str(), m.name.c_str(), c10::toString(a->dtype), window, m.lo[h - 1],
               a->channels_last ? " channels-last" : "", m.lo[h], m.hi[h], m.lo[w], m.hi[w]);
    }
    return 0;
}

void ff_dnn_th_aoti_free(THAoti **paoti)
{
    if (!*paoti)
        return;
    for (THAotiModel &m : (*paoti)->models)
        delete m.loader;
    delete *paoti;
    *paoti = NULL;
}

torch::ScalarType ff_dnn_th_aoti_dtype(const THAoti *aoti)
{
    return aoti->dtype;
}

int ff_dnn_th_aoti_channels_last(const THAoti *aoti)
{
    return aoti->channels_last;
}

int ff_dnn_th_aoti_channels(const THAoti *aoti)
{
    const int d = aoti->dims - 3;   /* 1 x [N x] C x H x W */
    int64_t c = aoti->models[0].lo[d];

    for (const THAotiModel &m : aoti->models)
        if (m.lo[d] != c || m.hi[d] != c)
            return 0;
    return c == 1 || c == 3 ? (int)c : 0;
}

int ff_dnn_th_aoti_to_device(THAoti *a, void *log_ctx, const c10::Device &device)
{
    if (device.type() != a->type) {
        av_log(log_ctx, AV_LOG_ERROR, "'%s' is an AOTInductor package compiled for %s; "
               "it cannot take frames on %s%s\n", a->path.c_str(), a->kind.c_str(),
               device.str().c_str(), device.is_cuda() ?
               ": put hwdownload before the filter" : "");
        return AVERROR(EINVAL);
    }
    if (device.index() == a->index)
        return 0;
    a->index = device.index();
    th_new_loaders(a);
    return 0;
}

/* 1 when the model takes the input's sizes. */
static int th_takes(const THAoti *a, const THAotiModel *m, const torch::Tensor &input)
{
    if (input.dim() != a->dims)
        return 0;
    for (int d = 0; d < a->dims; d++)
        if (input.size(d) < m->lo[d] || input.size(d) > m->hi[d])
            return 0;
    return 1;
}

/* Why input of another dimension count is not the package's: a window or not. */
static void th_dims_error(const THAoti *a, const THAotiModel *m, const torch::Tensor &input,
                          char *msg, size_t size)
{
    int dims = (int)input.dim();

    if (a->dims == 5)
        snprintf(msg, size, "the package takes 5-D input (1 x N x C x H x W, a window "
                 "of N=%" PRId64 " frames), not %d-D: use window=%" PRId64,
                 m->lo[1], dims, m->lo[1]);
    else
        snprintf(msg, size, "the package takes 4-D input (1 x C x H x W), not %d-D%s",
                 dims, dims == 5 ? ": it was exported for single frames, without a "
                 "window" : "");
}

/* Why the size of dimension d of the input is not the model's. */
static void th_size_error(const THAoti *a, const THAotiModel *m, const torch::Tensor &input,
                          int d, char *msg, size_t size)
{
    const int c = a->dims - 3;      /* 1 x [N x] C x H x W */

    if (d > c)
        snprintf(msg, size, "the package was exported for %s %" PRId64 "..%" PRId64
                 " (torch.export's dynamic shapes), not %" PRId64,
                 d == c + 1 ? "height" : "width", m->lo[d], m->hi[d], input.size(d));
    else if (d == 1 && c == 2)
        snprintf(msg, size, "the package was exported for a window of %" PRId64
                 " frames, not %" PRId64 ": use window=%" PRId64,
                 m->lo[d], input.size(d), m->lo[d]);
    else
        snprintf(msg, size, "the package takes %" PRId64 " %s, not %" PRId64,
                 m->lo[d], d ? "channels" : "frames", input.size(d));
}

/* Throws when the input is not what the model was exported for. */
static void th_check_input(const THAoti *a, const THAotiModel *m, const torch::Tensor &input)
{
    char msg[256];

    if (input.dim() != a->dims) {
        th_dims_error(a, m, input, msg, sizeof(msg));
        throw std::runtime_error(msg);
    }
    for (int d = 0; d < a->dims; d++) {
        if (input.size(d) >= m->lo[d] && input.size(d) <= m->hi[d])
            continue;
        th_size_error(a, m, input, d, msg, sizeof(msg));
        throw std::runtime_error(msg);
    }
    if (input.scalar_type() != a->dtype)
        throw std::runtime_error(std::string("the package takes ") +
                                 c10::toString(a->dtype) + " input");
}

/* The first model that takes the input, else "model" (which checks it). */
static const THAotiModel *th_pick_model(THAoti *a, const torch::Tensor &input)
{
    int i = 0, n = (int)a->models.size();
    int64_t key;

    while (i < n - 1 && !th_takes(a, &a->models[i], input))
        i++;
    th_check_input(a, &a->models[i], input);
    key = ((int64_t)i << 40) | (input.size(-2) << 20) | input.size(-1);
    if (a->last.exchange(key) != key)
        av_log(a->log_ctx, AV_LOG_VERBOSE, "package model '%s' for %" PRId64 "x%" PRId64 "\n",
               a->models[i].name.c_str(), input.size(-1), input.size(-2));
    return &a->models[i];
}

/*
 * The input dense in the package's layout: NCHW, NHWC, or for a window
 * channels-last H x W x N x C, as the window unit assembles it (so it is
 * passed as it is), which is how a window package is to be exported.
 */
static torch::Tensor th_dense(const THAoti *a, const torch::Tensor &input)
{
    int64_t n, c, h, w;

    if (a->dims == 4 || !a->channels_last)
        return input.contiguous(a->channels_last ? at::MemoryFormat::ChannelsLast :
                                                   at::MemoryFormat::Contiguous);
    n = input.size(1), c = input.size(2), h = input.size(3), w = input.size(4);
    if (input.strides().vec() == std::vector<int64_t>{ h * w * n * c, c, 1, w * n * c, n * c })
        return input;
    return torch::empty({ 1, h, w, n, c }, input.options()).permute({ 0, 3, 4, 1, 2 })
                .copy_(input);
}

torch::Tensor ff_dnn_th_aoti_run(THAoti *a, const torch::Tensor &input)
{
    void *stream = NULL;
    std::vector<torch::Tensor> out;
    const THAotiModel *m = th_pick_model(a, input);

    if (input.is_cuda())
        stream = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)
                     ->getStream(input.device()).native_handle();
    out = m->loader->run({ th_dense(a, input) }, stream);
    if (out.empty())
        throw std::runtime_error("the package returned no tensor");
    return out[0];
}
