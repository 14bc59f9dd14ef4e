"""
apple_roofline native core: backends (CPU, CUDA, Metal), buffers and timed kernels
"""

from collections.abc import Callable, Sequence
from typing import Annotated, Any

from numpy.typing import NDArray


class BackendError(RuntimeError):
    """An error raised by a backend (a RuntimeError)."""

class DeviceError(BackendError):
    """
    The device is missing, lost, out of memory, or a runtime call on it failed.
    """

class CompileError(BackendError):
    """A kernel failed to compile; `log` holds the compiler's output."""

    log: str = ''

class UnsupportedError(BackendError):
    """The backend or device lacks an optional capability."""

class Buffer:
    """
    Device memory. On host-visible backends view() exposes it to NumPy without a copy.
    """

    @property
    def nbytes(self) -> int:
        """Size in bytes."""

    def write(self, array: Annotated[NDArray, dict(order='C', device='cpu', writable=False)], offset: int = 0) -> None:
        """
        Copy a C-contiguous array's bytes into the buffer at a byte offset, after the backend's
        outstanding launches (raising their error).
        """

    def fill32(self, value: int, nbytes: int, offset: int = 0) -> None:
        """
        Fill nbytes at a byte offset with the 32-bit word value repeated, as it lies in memory (any
        element of 1, 2 or 4 bytes whose repetition it is), after the backend's outstanding launches;
        on CUDA on the device, without a copy. ValueError unless nbytes and offset are multiples of 4
        within the buffer.
        """

    def read(self, dtype: str, count: int = -1, offset: int = 0) -> NDArray:
        """
        Copy `count` elements (default: all) of `dtype` out of the buffer into a new NumPy array, after
        the backend's outstanding launches (raising their error): no synchronize() is needed first.
        """

    def read_into(self, array: Annotated[NDArray, dict(order='C', device='cpu')], offset: int = 0) -> None:
        """
        Copy the buffer's bytes at a byte offset into a writable C-contiguous array, filling it, after
        the backend's outstanding launches (raising their error).
        Reusing one array is faster than read() on discrete GPUs: pages the process already
        touched are not faulted in again by the copy (docs/design/budgets.md, "Time budgets").
        """

    def view(self, dtype: str) -> NDArray:
        """
        A NumPy array aliasing the buffer (no copy); keeps the buffer alive. Waits for the backend's
        outstanding launches first (raising their error); later ones are the caller's to synchronize().
        """

    def dlpack(self, dtype: str = 'uint8') -> Any:
        """
        A 1-D array of `dtype` aliasing the whole buffer (no copy), on the buffer's device, that
        implements the DLPack protocol: torch.from_dlpack(buf.dlpack('float32')), cupy.from_dlpack(...),
        numpy.from_dlpack(...) for host-visible buffers. Keeps the buffer alive. Waits for the backend's
        outstanding launches first (raising their error); later launches are the caller's to
        synchronize() before reading through the array.
        """

    def __dlpack__(self, **kwargs: object) -> object:
        """
        DLPack export of the buffer's bytes (uint8); see dlpack() for typed views.
        """

    def __dlpack_device__(self) -> tuple[int, int]:
        """
        (DLPack device type, device id): (1, 0) for host memory, (2, index) for CUDA memory; never
        waits for the launches in flight.
        """

class Kernel:
    """A compiled kernel (or a vendor library routine) that can be timed."""

    @property
    def entry(self) -> str: ...

    @property
    def wave_items(self) -> int:
        """
        Work items the device runs at once (SMs × resident blocks × block size on CUDA);
        0 where unknown or meaningless (CPU). Launch whole waves to keep every SM busy.
        """

    @property
    def block(self) -> int:
        """
        Threads per block (CUDA) or threadgroup (Metal) this kernel launches with (the constant
        BLOCK); 0 where there is none (CPU, vendor-library routines).
        """

    @property
    def simd_width(self) -> int:
        """
        Threads that execute together: the warp size (CUDA) or the pipeline's
        threadExecutionWidth (Metal); 0 on the CPU. Block sizes are multiples of it.
        """

    @property
    def max_block(self) -> int:
        """
        The most threads per block / threadgroup a launch of this build may have (CUDA:
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, at most BLOCK under __launch_bounds__(BLOCK);
        Metal: maxTotalThreadsPerThreadgroup); 0 on the CPU.
        """

    @property
    def timer(self) -> str:
        """
        How the last time() call measured, where a backend has more than one way (Metal:
        counter-sample-buffer timestamps at the pass boundaries, or the command buffer's
        GPUEndTime - GPUStartTime); empty otherwise.
        """

    @property
    def clock(self) -> dict:
        """
        The clock the last time() call's samples ran at, measured (docs/design/clocks.md, "Clocks"): a dict
        {"mhz": [MHz per sample, or per group of consecutive samples; at most 64], "method": how it
        was measured, or why not}. CUDA: %clock64 / %globaltimer in the kernel (shaders/cuda/clock.cuh)
        or, for cuBLAS, a probe kernel around each sample; CPU: each worker's core cycles over its time
        on the CPU (perf_event_open), where allowed; empty "mhz" where not measured.
        """

    def time(self, args: Sequence, work_items: int, batch: int = 1, reps: int = 1, clock: bool = True) -> list[float]:
        """
        Run `reps` samples of `batch` back-to-back launches of `work_items` work items; return the
        device-timed seconds of each sample (not per launch). Blocks; releases the GIL.
        `clock` False: the samples' clock is not wanted (warm-up, calibration, spin-up), so no clock
        probe runs among them and `clock` then says it was not measured.
        """

    def launch(self, args: Sequence, work_items: int = 1) -> None:
        """
        Enqueue one launch of `work_items` work items and return without waiting where the device
        allows it (CUDA: the backend's stream; Metal: one committed command buffer); the CPU runs
        it on its thread pool before returning. Backend.synchronize() waits for it. A GEMM
        (Backend.gemm) launches one product (work_items 1). Raises ValueError for bad arguments.
        """

    def timeline(self, args: Sequence, work_items: int = 1, reps: int = 1) -> dict:
        """
        Run `reps` launches, each waited for, and return the instants of each launch's steps:
        {'events': [names], 't': [[seconds since the call, per event] per launch], 'submit': event,
        'start': event, 'clock': str, 'uncertainty_s': float} (core/backend.h, Timeline).
        Raises UnsupportedError where the backend cannot observe the steps; on CUDA the kernel must
        write %globaltimer into its first argument (dispatch.cu's *_stamp kernels), else ValueError.
        """

class RenderPass:
    """
    A render pass of the graphics study, built by Backend.render_pass: ready to time and read.
    """

    @property
    def timer(self) -> str:
        """
        How the last time() call measured (Metal: the command buffer's GPUEndTime - GPUStartTime).
        """

    def time(self, batch: int = 1, reps: int = 1) -> list[float]:
        """
        Run `reps` samples of `batch` render passes back to back (each: clear, one instanced draw);
        return the device-timed seconds of each sample (not per pass). Blocks; releases the GIL.
        """

    def read(self) -> bytes:
        """
        The target after one pass with store action store: height * width * bytes-per-pixel bytes,
        rows packed, top row first.
        """

    def fragment_invocations(self) -> int:
        """
        Fragment-shader invocations of one pass, or -1 where the device cannot count them.
        """

class Backend:
    """One device of one backend: 'cpu', 'cuda' or 'metal'."""

    def __init__(self, name: str, index: int = 0) -> None:
        """
        Open device `index` of backend `name`. Raises ValueError (unknown name), UnsupportedError
        (backend not built) or DeviceError (no such device).
        """

    def info(self) -> dict:
        """Device description as a dict."""

    def alloc(self, nbytes: int) -> Buffer:
        """Allocate a zero-filled buffer of `nbytes` bytes."""

    def compile(self, source: str, entry: str, constants: dict = {}) -> Kernel:
        """
        Compile `entry` of `source` specialised by `constants`; cached. Raises CompileError.
        """

    def gemm(self, dtype: str, m: int, n: int, k: int) -> Kernel:
        """
        The vendor library's row-major C[m×n] = A[m×k]·B[k×n] as a Kernel taking (A, B, C).
        Raises UnsupportedError for a precision the backend lacks.
        """

    def render_pass(self, source: str, vertex: str, fragment: str, *, constants: dict = {}, format: str, width: int, height: int, instances: int = 1, blend_max: bool = False, store: bool = True, uniforms: Sequence[int] = [], texture: bytes | Annotated[NDArray, dict(dtype='uint8', order='C', device='cpu')] | None = None, texture_size: int = 0, linear: bool = False) -> RenderPass:
        """
        A render pass of the graphics study (core/backend.h, RenderSpec): `vertex` draws a fullscreen
        triangle `instances` times into a width x height `format` target (r8unorm, rgba8unorm,
        rgba16float, rgba32float) cleared to zero, `fragment` specialised by `constants`; blend_max
        turns on blend operation max (factors one); store=False uses store action don't-care;
        `uniforms` (uint32 words) are the fragment function's [[buffer(0)]], `texture` (RGBA8,
        texture_size^2 * 4 bytes) its [[texture(0)]], sampled with linear or nearest filtering and
        repeat addressing. Raises ValueError (bad spec), CompileError, UnsupportedError (CPU, CUDA, or
        a format the device cannot render or blend).
        """

    def synchronize(self) -> None: ...

def launch_throughput(backend: Backend, kernel: Kernel, args: Sequence, work_items: int = 1, launches: int = 1, reps: int = 1) -> list[float]:
    """
    Native loop: `reps` samples of `launches` kernel.launch(args, work_items) calls and one
    backend.synchronize(); host steady-clock seconds per sample. The floor of the same loop in Python.
    """

def launch_round_trip(backend: Backend, kernel: Kernel, args: Sequence, work_items: int = 1, reps: int = 1) -> list[float]:
    """
    Native loop: `reps` samples of one kernel.launch(args, work_items) and one backend.synchronize();
    host steady-clock seconds each.
    """

def backends() -> list:
    """
    Every backend known to this build: name, compiled (bool), devices (count), reason.
    """

def cpu_features() -> dict:
    """
    The vector ISA the CPU kernels were compiled for (arch, isa, vector_bits, fma,
    fp16_arithmetic) and the CPUs this process may use (threads).
    """

def measure_cpu_clock_hz(duration_s: float = 0.05, all_cores: bool = True) -> float:
    """
    Core clock in Hz, measured by timing a chain of dependent integer adds (one cycle each on
    x86-64 and arm64): with all_cores, on one thread per usable CPU at once (the all-core clock,
    median over threads), else on the calling thread alone (a single-core turbo clock).
    Raises ValueError for a duration outside (0, 10] s.
    """

def cpu_kernels() -> list[str]:
    """Entry names of the CPU backend's built-in kernels."""

def coreml_status() -> str:
    """
    "" when Core ML predictions can run in this build on this machine, else the reason they cannot.
    """

def coreml_compile(source: str, destination: str) -> str:
    """
    Compile the .mlpackage (or .mlmodel) at source with Core ML into the .mlmodelc folder
    destination (replaced); returns destination. Raises DeviceError with Core ML's message,
    UnsupportedError off macOS.
    """

def coreml_time(model: str, compute_units: str, inputs: Sequence[tuple[str, Sequence[int], bytes]], output: str, reps: int, min_warmup: int = 3, max_warmup_s: float = 2.0) -> dict:
    """
    Time `reps` predictions of the compiled model (.mlmodelc) with compute_units (CPU_ONLY,
    CPU_AND_GPU, CPU_AND_NE, ALL) on the host clock, one by one, after a warm-up. inputs: a list of
    (name, shape, FP16 bytes, row-major). Returns a dict: seconds (per prediction), warmup, load_s,
    output_dtype, output_shape, first (the first timed output's dense bytes), differing (timed
    outputs whose bytes differ from the first's) and last_differing (the last of those, or b'').
    Raises ValueError, DeviceError (Core ML's message), UnsupportedError off macOS.
    """

def coreml_compute_plan(model: str, compute_units: str) -> dict:
    """
    The compute plan of the compiled model (.mlmodelc) with compute_units: a dict with known,
    reason (why it is unknown: MLComputePlan needs macOS 14.4) and ops, one dict per ML-program
    operation (op, preferred: cpu, gpu, neural_engine, unknown or none, supported, cost: the
    estimated fraction of the model's cost or -1). Raises DeviceError, UnsupportedError off macOS.
    """

METAL_MAX_SAMPLES_PER_BUFFER: int = 4096

METAL_LAUNCHES_IN_FLIGHT: int = 256

METAL_QUEUE_DEPTH: int = 260

def metal_sample_chunks(reps: int) -> list[tuple[int, int]]:
    """
    The Metal backend's counter sample buffers for `reps` samples: (first sample, samples) per
    buffer, two timestamps per sample, at most METAL_MAX_SAMPLES_PER_BUFFER timestamps each.
    """

def metal_tick_period(before: tuple[float, float, int], after: tuple[float, float, int], apple_family: bool) -> dict:
    """
    Seconds per GPU tick from two clock readings (host_s, half_width_s, gpu_ticks) on an Apple-family
    GPU or another: a dict with ok, problem, seconds (exactly 1e-9 when snapped), calibrated, error
    (relative), snapped and checked (a calibration was made and agreed).
    """

def metal_choose_samples(command_buffer_s: Sequence[float], wanted: bool, unavailable: str, ticks: Sequence[int], before: tuple[float, float, int], after: tuple[float, float, int], what: str = 'kernel', apple_family: bool = False) -> dict:
    """
    The Metal backend's choice of samples (seconds, timer, counters) from each command buffer's
    GPUEndTime - GPUStartTime and the counters' readings (2 ticks per sample). Raises DeviceError
    when a command buffer reports no positive GPU time.
    """

def metal_constant_bytes(type: int, name: str, value: int | float, entry: str = 'kernel') -> bytes:
    """
    The bytes the Metal backend sets for function constant `name` = `value` declared with MTLDataType
    raw value `type` (float 3, half 16, int 29, uint 33, short 37, ushort 41, bool 53); ValueError
    naming the valid range for a value the type cannot hold or an unsupported type.
    """

def metal_constant_plan(stage: str, entry: str, compute: bool, passed: Sequence[str], declared: Sequence[str], source_declared: Sequence[str]) -> tuple[list[str], list[str]]:
    """
    Which of the `passed` function constants the Metal backend sets on function `entry` that declares
    `declared`, its source's functions declaring `source_declared`: (set, skipped). ValueError for a
    name no function of the source declares, or a kernel declaring BLOCK without being passed it.
    """

def metal_half_bits(value: float) -> int:
    """IEEE binary16 bits of a float, rounded to nearest even."""

def metal_command_buffer_failure(call: str, what: str, status: int, error: str) -> str:
    """
    The Metal backend's error text for a command buffer that ended with MTLCommandBufferStatus `status`.
    """

class MetalInFlight:
    """
    The Metal backend's bookkeeping of launches committed and not waited for.
    """

    def __init__(self, capacity: int) -> None: ...

    def acquire(self) -> None:
        """
        Wait while `capacity` launches are in flight, then count one more (a device wait: DeviceStopped
        past the thread's wait limit, signals handled meanwhile).
        """

    def complete(self, error: str) -> None:
        """A launch completed: "" or its failure (the first failure is kept)."""

    def abandon(self) -> None:
        """A slot whose command buffer was never committed."""

    def wait_idle(self) -> str:
        """
        Wait until none is in flight (a device wait, as acquire); return the first failure since the
        last call ("" if none).
        """

    @property
    def in_flight(self) -> int: ...

    @property
    def capacity(self) -> int: ...

def metal_msl_version(source: str) -> str:
    """
    The Metal Shading Language version the Metal backend compiles `source` with: "4.0" or "3.0".
    """

def metal_msl_versions(os_major: int) -> str:
    """The device info's msl_version on macOS `os_major`."""

METAL_MPP_BFLOAT_MACRO: str = 'AR_MPP_BFLOAT'

def metal_mpp_bfloat(os_major: int, os_minor: int) -> bool:
    """
    Whether matmul2d on bfloat tensors is built on macOS os_major.os_minor (26.1 and later).
    """

def metal_mpp_unsupported(entry: str, os_major: int, os_minor: int) -> str:
    """
    Why the Metal 4 tensor-op kernel `entry` is not built on this macOS (one line), or "".
    """

class MetalArchivePolicy:
    """
    Whether a process archives Metal compute pipelines (core/metal_rules.h).
    """

    def __init__(self) -> None: ...

    @property
    def archiving(self) -> bool: ...

    def check_next(self) -> bool:
        """True once: reload the first archive serialized before storing it."""

    def checked(self, reloaded: bool) -> None:
        """The reload's outcome."""

    def compiled(self, function: str, why: str) -> None:
        """A compiled pipeline: archived (why "") or not."""

    def summary(self) -> str:
        """"" or the one note on pipelines not archived."""

def coreml_compute_units(name: str) -> int:
    """
    MLComputeUnits' raw value for a coremltools name (CPU_ONLY, CPU_AND_GPU, ALL, CPU_AND_NE).
    """

def coreml_check_inputs(inputs: Sequence[tuple[str, Sequence[int], int]], reps: int, max_warmup_s: float) -> list[list[int]]:
    """
    coreml_time's argument checks, inputs given as (name, shape, value count): each input's
    row-major strides, or ValueError naming the problem.
    """

def coreml_warmup_done(done: int, min_warmup: int, previous_s: float, current_s: float, spent_s: float, max_warmup_s: float) -> bool:
    """Whether Core ML's warm-up stops after `done` predictions."""

COREML_COMPUTE_PLAN_WAIT_S: float = 120.0

def coreml_compute_plan_timeout(model: str, waited_s: float) -> str:
    """
    The compute plan's reason when MLComputePlan's completion handler had not run after `waited_s` s.
    """

def coreml_dtype(raw: int) -> tuple[str, int]:
    """
    (NumPy name, bytes) of an MLMultiArrayDataType raw value; ("", 0) when unknown.
    """

def coreml_dense_copy(data: bytes, shape: Sequence[int], strides: Sequence[int], element_size: int) -> bytes:
    """
    A strided array's elements (strides in elements), dense and row-major; ValueError for an element
    outside `data`.
    """

def kernel_cache_stats() -> dict:
    """
    The on-disk kernel cache of this process (docs/design/backends.md, "The kernel cache"): dir (its folder
    now, "" when there is none), why (why not), and since the process started: hits, misses,
    rebuilt (entries found corrupt, stale or of another key, and compiled again), compiles (kernels
    compiled: NVRTC programs on CUDA, pipelines on Metal), stored (entries written) and warnings
    (one line each, at most 64).
    """

def kernel_cache_fetch(key: Sequence[tuple[str, str]], payload: Sequence[bytes]) -> list[bytes]:
    """
    Test hook: the entry of `key` ((name, value) parts) where it is valid, else `payload` (counted
    as a compile) written as its entry; the fields read or built.
    """

def kernel_cache_prune(stale: Callable) -> int:
    """
    Removes the cache folder's entries for whose key ((name, value) parts) stale(key) is True;
    returns how many. (The Metal backend removes its archives of other OS builds so.)
    """

def kernel_cache_reject(key: Sequence[tuple[str, str]], why: str) -> None:
    """
    Test hook: the backend found `key`'s valid entry unusable (as Metal rejects an archive).
    """

def kernel_cache_note(line: str, tag: str = '') -> None:
    """
    Test hook: a backend's warning; a later one with the same non-empty tag replaces it.
    """

def kernel_cache_path(key: Sequence[tuple[str, str]]) -> str:
    """
    Test hook: the file of `key`'s entry, or "" where the cache is off or unwritable.
    """

WAIT_CAP_S: float = 60.0

WAIT_INTERRUPT_SLICE_S: float = 0.05

def set_wait_limit(seconds: float, pass_name: str) -> tuple[float, str]:
    """
    Sets the calling thread's device-wait limit: its native waits (CUDA stream waits, Metal command
    buffers) that last longer than `seconds` raise apple_roofline.errors.DeviceStopped naming
    `pass_name`. seconds <= 0 means WAIT_CAP_S. Returns the previous
    (seconds, pass_name), to restore it.
    """

def wait_limit() -> tuple[float, str]:
    """The calling thread's device-wait limit: (seconds, pass_name)."""

WAIT_SPIN_S: float = 0.002

WAIT_POLL_MAX_S: float = 0.001

def wait_in_slices(wait_slice: Callable, limit_s: float, now: Callable) -> bool:
    """
    The loop behind every native device wait, on the clock `now()` (seconds): calls wait_slice(s),
    which blocks at most s seconds and returns True once done, with s at most WAIT_INTERRUPT_SLICE_S
    and the last slice cut to `limit_s` after the start; runs Python's signal handlers between
    slices (what they raise propagates). Returns True when done, False once `limit_s` passed.
    """

class DeviceCompletion:
    """
    A one-shot event a device's callback signals (core/waits.h): what a Metal command
    buffer's completed handler and Core ML's completion handler signal, waited on
    in slices as the backends wait on it.
    """

    def __init__(self) -> None: ...

    def signal(self) -> None:
        """Signal it (any thread)."""

    @property
    def signalled(self) -> bool: ...

    def wait(self, what: str) -> None:
        """
        Sleep until signalled, within the calling thread's wait limit: DeviceStopped naming the pass
        (or `what`) past it; signals handled meanwhile.
        """

    def wait_within(self, limit_s: float) -> bool:
        """
        Sleep until signalled or `limit_s` seconds passed: True when signalled.
        """

    def poll(self, what: str, spin_s: float = 0.0) -> None:
        """
        Wait as a device that can only be polled is waited for (a CUDA stream): poll `signalled`,
        yielding for `spin_s` (WAIT_SPIN_S for a host-timed wait), then sleeping between polls; the
        thread's limit and signals as wait().
        """
