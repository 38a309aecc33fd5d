"""Time torch._int_mm with B row-major and column-major on the GPU (why the int8 probe takes B column-major)."""
import torch

from accelkit.probes.timing import measure_seconds

n = 8192
gen = torch.Generator(device="cpu").manual_seed(0)
a = torch.randint(-128, 128, (n, n), generator=gen, dtype=torch.int8).cuda()
row = torch.randint(-128, 128, (n, n), generator=gen, dtype=torch.int8).cuda()
col = row.t().contiguous().t()
for name, b in (("B row-major", row), ("B column-major", col)):
    times = measure_seconds(lambda: torch._int_mm(a, b), "cuda:0", warmup=5, min_repeats=10, max_repeats=100,
                            budget_s=1.0)
    t = sorted(times)[len(times) // 2]
    print(f"int8 {n}^3 {name}: {2 * n**3 / t / 1e12:.0f} TOP/s (median of {len(times)})")
