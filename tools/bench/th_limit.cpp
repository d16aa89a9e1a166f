/*
 * The benchmark's limit: LibTorch alone running a TorchScript model on a
 * resident frame, with LibTorch's default thread settings and the graph
 * executor's optimization off, as dnn_processing's torch backend runs it by
 * default (optimize=0).
 *
 * usage: th_limit MODEL WIDTH HEIGHT DEVICE FRAME_DEVICE SECONDS [hold|count=N]
 *                 [dtype=fp32|fp16|bf16] [cl=0|1]
 *
 * DEVICE runs the model (cpu, cuda, cuda:1 ...); FRAME_DEVICE holds the uint8
 * HWC rgb frames (cpu for upstream's way, the model's device for CUDA frames).
 * Two loops of SECONDS each, after a warm-up:
 *   forward   the model on a resident float NCHW tensor;
 *   frame     uint8 HWC -> float NCHW / 255, forward, * 255, clamp, round,
 *             uint8 HWC, into a resident output frame.
 * Prints "warm" once warmed up, then one JSON line of results.  With "hold" it
 * then waits for a line on stdin before exiting (so that the caller can read
 * the GPU's memory while the model is still loaded).  With count=N it runs
 * the frame loop N times instead, untimed (for counting heap allocations).
 * dtype casts the model and makes the input in that type; cl=1 makes the
 * model's 4-D weights channels-last and gives it an NHWC-strided input: the
 * same choices as the backend's precision and channels_last options.
 * A MODEL named *.pt2 is an AOTInductor package, run by its own loader
 * (dtype must be the package's; cl=1 for a package exported channels-last:
 * its strides are compiled in, only the input is made NHWC).
 */

#include <torch/script.h>
#include <torch/cuda.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <string>

using Clock = std::chrono::steady_clock;

static void sync(const torch::Device &dev)
{
    if (dev.is_cuda())
        torch::cuda::synchronize(dev.index() < 0 ? 0 : dev.index());
}

/* Run fn until seconds have passed; return iterations per second. */
static double rate(const torch::Device &dev, double seconds,
                   const std::function<void()> &fn)
{
    long n = 0;
    double elapsed;

    sync(dev);
    auto start = Clock::now();
    do {
        fn();
        n++;
        sync(dev);
        elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < seconds);
    return n / elapsed;
}

static torch::ScalarType parse_dtype(const std::string &name)
{
    if (name == "fp16")
        return torch::kHalf;
    if (name == "bf16")
        return torch::kBFloat16;
    if (name != "fp32")
        throw std::runtime_error("dtype " + name + " is not fp32, fp16 or bf16");
    return torch::kFloat32;
}

static void channels_last(torch::jit::Module &module)
{
    for (torch::Tensor p : module.parameters())
        if (p.dim() == 4)
            p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));
}

struct Extra {
    bool hold = false, cl = false;
    long count = 0;
    std::string dtype = "fp32";
};

static Extra parse_extra(int argc, char **argv)
{
    Extra e;

    for (int i = 7; i < argc; i++) {
        const std::string a = argv[i];
        e.hold  |= a == "hold";
        e.count  = a.rfind("count=", 0) == 0 ? std::atol(argv[i] + 6) : e.count;
        e.dtype  = a.rfind("dtype=", 0) == 0 ? a.substr(6) : e.dtype;
        e.cl    |= a == "cl=1";
    }
    return e;
}

using Forward = std::function<torch::Tensor(const torch::Tensor &)>;

static Forward load_script(const std::string &path, const torch::Device &dev,
                           torch::ScalarType type, bool cl)
{
    auto module = std::make_shared<torch::jit::Module>(torch::jit::load(path, dev));

    module->eval();
    module->to(type);
    if (cl)
        channels_last(*module);
    return [module](const torch::Tensor &x) { return module->forward({x}).toTensor(); };
}

static Forward load_package(const std::string &path, const torch::Device &dev)
{
    /* as the backend does: other strides or sizes than exported fail, not time */
    setenv("AOTI_RUNTIME_CHECK_INPUTS", "1", 0);
    auto loader = std::make_shared<torch::inductor::AOTIModelPackageLoader>(
        path, "model", false, 1, dev.is_cuda() ? (c10::DeviceIndex)dev.index() : -1);
    return [loader](const torch::Tensor &x) { return loader->run({x})[0]; };
}

static Forward load_model(const std::string &path, const torch::Device &dev,
                          torch::ScalarType type, bool cl)
{
    const bool package = path.size() > 4 && path.compare(path.size() - 4, 4, ".pt2") == 0;

    return package ? load_package(path, dev) : load_script(path, dev, type, cl);
}

/* The model's input: NCHW, or an NCHW view of NHWC memory (cl). */
static torch::Tensor make_input(int h, int w, torch::ScalarType type,
                                const torch::Device &dev, bool cl)
{
    auto xo = torch::TensorOptions().dtype(type).device(dev);

    return cl ? torch::empty({1, h, w, 3}, xo).permute({0, 3, 1, 2})
              : torch::empty({1, 3, h, w}, xo);
}

static void report(double fwd, double frm, int ow, int oh, const Extra &ex)
{
    std::printf("{\"forward_fps\": %.3f, \"frame_fps\": %.3f, "
                "\"out\": [%d, %d], \"threads\": %d, \"dtype\": \"%s\", \"cl\": %d}\n",
                fwd, frm, ow, oh, (int)at::get_num_threads(), ex.dtype.c_str(), (int)ex.cl);
    std::fflush(stdout);
}

/* hold: keep the model loaded until a line (or the end) on stdin. */
static void wait_for_stdin()
{
    std::string line;
    std::getline(std::cin, line);
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        std::cerr << "usage: th_limit MODEL WIDTH HEIGHT DEVICE FRAME_DEVICE SECONDS [hold|count=N]\n";
        return 2;
    }
    const int w = std::atoi(argv[2]), h = std::atoi(argv[3]);
    const torch::Device dev(argv[4]), frame_dev(argv[5]);
    const double seconds = std::atof(argv[6]);
    const Extra ex = parse_extra(argc, argv);

    try {
        if ((dev.is_cuda() || frame_dev.is_cuda()) && !torch::cuda::is_available())
            throw std::runtime_error("CUDA asked for but not available");
        c10::InferenceMode guard;
        torch::jit::setGraphExecutorOptimize(false);
        const torch::ScalarType type = parse_dtype(ex.dtype);
        Forward model = load_model(argv[1], dev, type, ex.cl);

        auto u8 = torch::TensorOptions().dtype(torch::kUInt8).device(frame_dev);
        torch::Tensor frame = torch::randint(0, 256, {h, w, 3}, u8);
        torch::Tensor x = make_input(h, w, type, dev, ex.cl);
        x[0].copy_(frame.permute({2, 0, 1}));
        x.div_(255);
        torch::Tensor y = model(x);
        const int oh = y.size(2), ow = y.size(3);
        torch::Tensor out = torch::empty({oh, ow, 3}, u8);

        auto forward = [&] { model(x); };
        auto full = [&] {
            x[0].copy_(frame.permute({2, 0, 1}));
            x.div_(255);
            torch::Tensor r = model(x)[0].to(torch::kFloat32);
            r.mul_(255).clamp_(0, 255).round_();
            out.copy_(r.permute({1, 2, 0}));
        };
        for (int i = 0; i < (dev.is_cuda() ? 20 : 3); i++)
            full();
        sync(dev);
        if (ex.count) {
            for (long i = 0; i < ex.count; i++)
                full();
            sync(dev);
            return 0;
        }
        std::cout << "warm" << std::endl;

        const double fwd = rate(dev, seconds, forward);
        const double frm = rate(dev, seconds, full);
        report(fwd, frm, ow, oh, ex);
    } catch (const std::exception &e) {
        const c10::Error *ce = dynamic_cast<const c10::Error *>(&e);
        std::cerr << "th_limit: " << (ce ? ce->what_without_backtrace() : e.what()) << "\n";
        return 1;
    }
    if (ex.hold)
        wait_for_stdin();
    return 0;
}
