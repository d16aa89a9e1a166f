"""PyTorch anchor for make bench's invert 1920x1080 CPU row: the frame-to-frame
pipeline (uint8 frame -> float / 255 -> model -> uint8) and the forward alone,
steady fps from two run lengths.  usage: python pytorch_invert_anchor.py [MODEL]"""
import sys, time, torch
m = torch.jit.load(sys.argv[1] if len(sys.argv) > 1 else 'invert.pt').eval()
frame = torch.randint(0, 256, (1080, 1920, 3), dtype=torch.uint8)
def full():
    x = frame.permute(2, 0, 1).unsqueeze(0).float().div_(255)   # NCHW view, channels-last strides
    y = m(x)
    return y.mul(255).clamp_(0, 255).round_().to(torch.uint8).squeeze(0).permute(1, 2, 0).contiguous()
def fwd(x=frame.permute(2,0,1).unsqueeze(0).float().div(255)):
    return m(x)
with torch.no_grad():
    for name, f in (('pytorch frame->model->frame', full), ('pytorch forward only', fwd)):
        for _ in range(10): f()
        res = []
        for n in (50, 200):
            t = time.perf_counter()
            for _ in range(n): f()
            res.append((n, time.perf_counter() - t))
        (n1, t1), (n2, t2) = res
        print('%s: %.1f fps steady (threads %d)' % (name, (n2 - n1) / (t2 - t1), torch.get_num_threads()))
