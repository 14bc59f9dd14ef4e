// Test-only (tests/device/test_device_stop.py): a CUDA kernel made to hang. Never part of the
// product's kernel tables.
//
// ctl[0] counts launches; launch number ctl[1] and later spin ctl[3] clock cycles, the earlier ones
// ctl[2]. The host sets ctl[3] enormous, so a launch after the first ctl[1] does not end in
// practice: the watchdog's bound, derived from the earlier launches' times, must end the study.
// One thread does the work (launch = 1 work item); the trailing argument is the work-item count
// every kernel of the backend receives.
extern "C" __global__ void hang_spin(unsigned long long* ctl, unsigned long long n) {
  if (blockIdx.x * blockDim.x + threadIdx.x != 0 || n == 0) return;
  const unsigned long long launch = atomicAdd(&ctl[0], 1ull);
  const long long spins = (long long)(launch < ctl[1] ? ctl[2] : ctl[3]);
  const long long start = clock64();
  while (clock64() - start < spins) {
  }
  ctl[4] = launch;
}
