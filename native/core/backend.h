// The backend interface: plain C++, no Metal, CUDA or BLAS types
// (docs/design/measurement.md, "The backend interface").
//
// Contract, shared by every backend:
//  * Backend::info() describes the device: at least "backend", "name", "index"; where known
//    "compute_units", "memory_bytes", "clock_hz" and backend-specific keys.
//  * Backend::alloc(nbytes) returns a Buffer of at least nbytes bytes, zero-filled. CPU buffers are
//    page-aligned (so 64-byte aligned) and first-touched by the worker that uses each slice.
//  * Backend::compile(source, entry, constants) returns a Kernel or throws CompileError carrying the
//    compiler log. Compiled kernels are cached by (source hash, entry, constants), and kept on disk
//    across processes (core/kernel_cache.h).
//  * Backend::gemm(dtype, m, n, k) returns the vendor library's C = A·B (row-major, no transpose,
//    alpha = 1, beta = 0) as a Kernel whose args are {A, B, C}; UnsupportedError where the backend
//    lacks that precision. Precisions: fp64, fp32, tf32, fp16, bf16 (A, B, C of that type; tf32
//    stores fp32), int8 (int8 A and B, int32 C, and B passed transposed, n×k row-major: the layout
//    integer tensor-core GEMMs take).
//  * Buffer::address() gives the memory's DLPack device (CPU for host-visible memory, CUDA device
//    memory otherwise) so Python can export it without a copy.
//  * Buffer::read, write, host_ptr and address wait for the backend's outstanding work (launches
//    not yet synchronized) before touching the memory, and raise its error (DeviceError) rather than
//    swallow it: a launch followed by a read returns the launch's result with no synchronize()
//    between them. CPU: launches run before launch() returns, nothing is outstanding; CUDA: read and
//    write are copies on the backend's stream, ordered after its launches, and address() (which a
//    DLPack consumer reads on its own) synchronizes the stream first; Metal: each waits for the
//    launches' command buffers (synchronize_launches). Work launched after a view or a DLPack
//    export was taken is the caller's to wait for (Backend::synchronize) before reading through it.
//  * `work_items` (Kernel::time, launch, timeline and the launch loops below) is the number of
//    work items of one launch: GPU threads, or CPU kernel-table items shared among the workers.
//    Python's keyword and the error messages use the same name (check_work_items in checks.h
//    rejects 0 with std::invalid_argument).
//  * Kernel::time(args, work_items, batch, reps, clock) blocks, runs `reps` samples of `batch`
//    back-to-back launches of `work_items` work items each, and returns the device-timed seconds
//    of each sample (seconds per sample, not per launch). `clock` false: the samples' clock is not
//    wanted (warm-up, calibration, spin-up), so no probe runs among them (on CUDA a warm-up of
//    one-launch samples would run a probed launch after each, twice the work at a power limit;
//    docs/design/clocks.md, "Clocks") and clock() then says it was not measured. CPU: steady clock around a
//    barrier-synchronised parallel region; CUDA: events around the batch on one stream; Metal:
//    GPUEndTime - GPUStartTime of one command buffer per sample. The caller releases the GIL. GPU
//    kernels receive `args` in order (a Buffer as a device pointer, an int as `long long`, a float
//    as `double`) followed by the work-item count as `unsigned long long`; CUDA launches
//    ceil(work_items / BLOCK) blocks of BLOCK threads (the constant BLOCK, default 256, also
//    passed to NVRTC as -DBLOCK). The CUDA backend also consumes the constant AR_ARCH_SPECIFIC
//    (0 or 1; 1: compile for the device's arch-specific target, sm_90a on Hopper, which wgmma needs;
//    a CompileError where NVRTC cannot; never passed to the source).
//    Metal binds them at [[buffer(i)]] in the same order: a Buffer as `device T*`, an int as
//    `constant long&`, a float as `constant float&` (MSL has no double: the value is rounded to
//    fp32), then the work-item count as `constant ulong&`; it dispatches `work_items` threads
//    (dispatchThreads, threadgroups of BLOCK threads, default 256; work_items < 2^32). Other
//    constants are function constants, set by name with the type the function declares.
//  * Kernel::timer() says how the last time() call measured (empty where there is one way only):
//    on Metal, counter-sample-buffer timestamps at the compute pass's boundaries, or the command
//    buffer's GPUEndTime - GPUStartTime when the counters are unsupported or return nothing valid.
//  * Kernel::clock() gives the clock the last time() call's samples ran at, measured by the device
//    where the backend can (docs/design/clocks.md, "Clocks"): MHz per sample (or per group of consecutive
//    samples, at most 64 values) and how it was measured; no values and the reason where it was not.
//    CUDA: %clock64 / %globaltimer read by the kernel itself (shaders/cuda/clock.cuh), or a probe
//    kernel before and after each sample on the same stream for cuBLAS; CPU: each worker's core
//    cycles over its time on the CPU (perf_event_open), where the OS allows it.
//  * Kernel::launch(args, work_items) enqueues one launch and returns without waiting where the
//    device allows it (CUDA: cuLaunchKernel on the backend's stream; Metal: one command buffer,
//    committed, not waited for, at most metal_rules::kLaunchesInFlight at once, a launch beyond
//    them waiting for one to complete); the CPU runs it on the thread pool (fork-join) before returning.
//    Backend::synchronize() waits for everything launched. Vendor-library GEMMs launch one
//    product (launch must be 1: CPU BLAS on the calling thread, cuBLAS on the stream, MPS in one
//    command buffer). This is the path the dispatch-latency and per-call cost studies measure.
//  * Kernel::timeline(args, work_items, reps) runs `reps` launches, each waited for, and returns
//    the instants of each launch's steps on the host clock (Timeline below); UnsupportedError where
//    the backend cannot observe them. CUDA reads the kernel's start from %globaltimer, which the
//    kernel itself must write into the first 8 bytes of its first argument (dispatch.cu's
//    *_stamp kernels); std::invalid_argument when it did not.
//  * Backend::render_pass(spec) builds a render pass of the graphics study (docs/design/graphics.md, "The
//    graphics study"; RenderSpec below): the shader's vertex function draws a fullscreen triangle
//    from the vertex index (no vertex buffer), `instances` times in one instanced draw, into a
//    width x height target of `format` cleared to (0,0,0,0); the fragment function is specialised by
//    `constants` as compute kernels are. RenderPass::time(batch, reps) runs `reps` samples of `batch`
//    passes back to back and returns seconds per sample (Metal: GPUEndTime - GPUStartTime of one
//    command buffer per sample; timer() says so); read() returns the target after one pass with
//    store action store, height*width*bytes-per-pixel bytes, rows packed; fragment_invocations()
//    counts fragment-shader invocations of one pass, or -1 where the device cannot count them.
//    check_render_spec() is the shared validation: std::invalid_argument naming the valid range for
//    an unknown format, a zero size or instance count, a texture that is not texture_size^2 * 4 bytes
//    or whose size is not a power of two. Backends without render passes (CPU, CUDA) keep the
//    default, which throws UnsupportedError naming the backend.
//  * Errors: std::invalid_argument for bad arguments, errors.h types for everything else. Nothing
//    throws from a destructor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace ar {

using Value = std::variant<bool, int64_t, double, std::string>;
using Info = std::map<std::string, Value>;
// Compile-time constants of a kernel (function constants on Metal, -D on NVRTC, runtime values or
// template parameters on the CPU).
using Constants = std::map<std::string, std::variant<int64_t, double>>;

class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual size_t nbytes() const = 0;
  // Host pointer when the memory is host-visible (CPU, Apple unified memory), else nullptr; once
  // the backend's outstanding work is done (see the contract above).
  virtual void* host_ptr() { return nullptr; }
  // Where the memory lives, for DLPack export: the pointer and DLPack's device type and id
  // (kDLCPU = 1 for host-visible memory, Apple's unified memory included; kDLCUDA = 2 for CUDA
  // device memory).
  struct Address {
    enum : int { kCPU = 1, kCUDA = 2 };
    void* ptr;
    int device_type;
    int device_id;
  };
  virtual Address address() { return {host_ptr(), Address::kCPU, 0}; }
  // Address's device type and id alone, without waiting for outstanding work or touching the
  // memory (DLPack's __dlpack_device__ only says where the memory lives): a constant of the buffer.
  virtual std::pair<int, int> dlpack_device() const { return {Address::kCPU, 0}; }
  // Copy n bytes in / out at a byte offset, after the backend's outstanding work (the contract
  // above); std::invalid_argument when out of range.
  virtual void write(const void* src, size_t n, size_t offset) = 0;
  virtual void read(void* dst, size_t n, size_t offset) const = 0;
  // Fill n bytes at a byte offset with the 32-bit word `value` repeated, as it lies in memory (so
  // any element type of 1, 2 or 4 bytes whose repetition it is), after the backend's outstanding
  // work: the poison an output gets before it is computed. n and offset multiples of 4;
  // std::invalid_argument otherwise or when out of range. The default (core/buffer.cpp) fills a
  // host-visible buffer in place (UnsupportedError for any other); CUDA fills on the device
  // (cuMemsetD32Async), without a copy.
  virtual void fill32(uint32_t value, size_t n, size_t offset);
};

// A kernel argument: a buffer, an integer or a floating-point scalar.
using Arg = std::variant<Buffer*, int64_t, double>;

// The instants of `reps` launches (Kernel::timeline), each in seconds since that launch's call on
// the host's steady clock. events[0] is "call" (t = 0); the others are named by the step that ends
// at them (Metal: create, encode, commit, start, execute, complete; CUDA: launch, start, complete;
// CPU: wake, fork, join). A device instant is mapped onto the host clock with an uncertainty of
// ±uncertainty_s, so a step may come out slightly negative.
struct Timeline {
  std::vector<std::string> events;
  std::vector<std::vector<double>> t;  // reps rows of events.size() instants
  std::string submit;                  // the event at which the host hands the work over
  std::string start;                   // the event at which the device starts it
  std::string clock;                   // how the instants were measured
  double uncertainty_s = 0.0;
};

// The measured clock of a time() call's samples (Kernel::clock).
struct ClockReading {
  std::vector<double> mhz;  // one per sample or group of consecutive samples; empty: not measured
  std::string method;       // how it was measured, or why not
};
// ClockReading::method after a time() call made with clock false.
inline constexpr const char* kClockNotAsked =
    "not measured: the samples were timed without their clock (warm-up, calibration or spin-up)";

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual std::string entry() const = 0;
  // Work items the device runs at once for this kernel (a full "wave": on CUDA, SMs × resident
  // blocks per SM from the occupancy calculator × BLOCK), or 0 where the notion does not apply
  // (CPU) or is unknown. A launch of a whole number of waves keeps every SM equally busy.
  virtual uint64_t wave_items() const { return 0; }
  // Threadgroup-size facts for autotuning (docs/design/studies.md, "Threadgroup-size tuning"); 0 where the
  // notion does not apply (CPU kernels, vendor-library routines):
  //  * block(): threads per block / threadgroup this kernel launches with (the constant BLOCK);
  //  * simd_width(): threads that execute together (CUDA: the device's warp size; Metal: the
  //    pipeline's threadExecutionWidth); block sizes are multiples of it;
  //  * max_block(): the most threads per block / threadgroup a launch of this build may have
  //    (CUDA: cuFuncGetAttribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), at most BLOCK for a kernel
  //    declared __launch_bounds__(BLOCK); Metal: the pipeline's maxTotalThreadsPerThreadgroup).
  virtual uint32_t block() const { return 0; }
  virtual uint32_t simd_width() const { return 0; }
  virtual uint32_t max_block() const { return 0; }
  virtual std::string timer() const { return ""; }
  virtual ClockReading clock() const { return {}; }
  virtual std::vector<double> time(const std::vector<Arg>& args, uint64_t work_items, uint64_t batch, uint64_t reps,
                                   bool clock) = 0;
  virtual void launch(const std::vector<Arg>& args, uint64_t work_items);
  // True where launch() only hands the work to the device's queue and returns without waiting for
  // it (CUDA: cuLaunchKernel on the backend's stream), so a caller may keep a lock such as Python's
  // GIL across it; false (the default) where it may wait (the CPU runs the kernel before returning).
  virtual bool launch_enqueues() const { return false; }
  virtual Timeline timeline(const std::vector<Arg>& args, uint64_t work_items, uint64_t reps);
};

// A render pass of the graphics study (Backend::render_pass).
struct RenderSpec {
  std::string source;    // shader source (MSL on Metal)
  std::string vertex;    // vertex function: a fullscreen triangle from the vertex index, no vertex buffer
  std::string fragment;  // fragment function
  Constants constants;   // function constants (set by name with the declared type, as compute kernels)
  std::string format;    // render-target format, WebGPU name: r8unorm, rgba8unorm, rgba16float, rgba32float
  uint32_t width = 0, height = 0;
  uint32_t instances = 1;          // layers: the triangle drawn `instances` times in one instanced draw
  bool blend_max = false;          // blending on: operation max, source and destination factors one (colour and alpha)
  bool store = true;               // store action store; false: don't care
  std::vector<uint32_t> uniforms;  // the fragment function's [[buffer(0)]] bytes; empty: none bound
  std::vector<uint8_t> texture;    // RGBA8 texels, texture_size^2 * 4 bytes, bound at [[texture(0)]]; empty: none
  uint32_t texture_size = 0;
  bool linear = false;  // [[sampler(0)]]: linear or nearest filtering, repeat addressing, normalized coords
};

class RenderPass {
 public:
  virtual ~RenderPass() = default;
  // `reps` samples of `batch` render passes back to back (each pass: clear, one instanced draw); seconds per sample.
  virtual std::vector<double> time(uint64_t batch, uint64_t reps) = 0;
  virtual std::string timer() const { return ""; }
  // The target after one pass with store action store: height*width*bytes-per-pixel bytes, row-major, packed.
  virtual std::vector<uint8_t> read() = 0;
  // Fragment-shader invocations of one pass, or -1 where the device cannot count them.
  virtual int64_t fragment_invocations() { return -1; }
};

// Bytes per pixel of a render-target format (WebGPU name); std::invalid_argument naming the valid
// formats for any other.
size_t render_format_bytes(const std::string& format);
// Checks `spec` (render.cpp): std::invalid_argument naming the valid range for an unknown format, a
// zero or over-large size, zero instances, a texture whose bytes are not texture_size^2 * 4 or
// whose size is not a power of two, a texture_size without a texture, uniforms over 4 KiB.
void check_render_spec(const RenderSpec& spec);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Info info() const = 0;
  virtual std::shared_ptr<Buffer> alloc(size_t nbytes) = 0;
  virtual std::shared_ptr<Kernel> compile(const std::string& source, const std::string& entry,
                                          const Constants& constants) = 0;
  virtual std::shared_ptr<Kernel> gemm(const std::string& dtype, int64_t m, int64_t n, int64_t k) = 0;
  virtual void synchronize() {}
  // A render pass of the graphics study; the default throws UnsupportedError naming the backend.
  virtual std::shared_ptr<RenderPass> render_pass(const RenderSpec& spec);
};

struct BackendStatus {
  std::string name;
  bool compiled = false;
  int devices = 0;
  std::string reason;  // why not compiled / no device; empty when usable
};

// Registry (registry.cpp): every backend known to this build, compiled in or not.
std::vector<BackendStatus> available_backends();
// Throws std::invalid_argument for an unknown name or a negative index, UnsupportedError when the
// backend was not compiled in, DeviceError when the index names no device.
std::shared_ptr<Backend> make_backend(const std::string& name, int index);

// Implemented by each backend, or by its no_<x>.cpp stub.
BackendStatus cpu_status();
std::shared_ptr<Backend> make_cpu_backend(int index);
BackendStatus cuda_status();
std::shared_ptr<Backend> make_cuda_backend(int index);
BackendStatus metal_status();
std::shared_ptr<Backend> make_metal_backend(int index);

// Native launch loops over the public path (dispatch.cpp), the floor that Python calling
// Kernel.launch and Backend.synchronize once per launch is compared with. Host steady clock.
//  * launch_throughput: `reps` samples of `launches` calls to kernel.launch(args, work_items),
//    each of `work_items` work items, then one backend.synchronize(); seconds per sample.
//  * launch_round_trip: `reps` samples of one kernel.launch(args, work_items) and one
//    backend.synchronize(); seconds each.
std::vector<double> launch_throughput(Backend& backend, Kernel& kernel, const std::vector<Arg>& args,
                                      uint64_t work_items, uint64_t launches, uint64_t reps);
std::vector<double> launch_round_trip(Backend& backend, Kernel& kernel, const std::vector<Arg>& args,
                                      uint64_t work_items, uint64_t reps);

}  // namespace ar
