// A kernel that keeps the device busy for at least ns nanoseconds. Launched before a timed
// launch, it lets the host enqueue the timed work (and its CUDA events) while the device
// waits, so the events time the work and not the host's launch latency (tens of us).
extern "C" __global__ void delay_ns(long long ns) {
    const long long end = clock64() + ns * 2;  // at most ~2 GHz: at least ns nanoseconds
    while (clock64() < end) __nanosleep(1000);
}
