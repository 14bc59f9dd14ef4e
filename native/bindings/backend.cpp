// Backend, Buffer and Kernel bindings. The GIL is released while a kernel is timed and while
// buffers are allocated (first touch runs on the worker threads) or copied.
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <stdexcept>

#include "../core/backend.h"
#include "bindings.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace ar::bind {

namespace {

nb::dlpack::dtype parse_dtype(const std::string& s, size_t* size) {
  using nb::dlpack::dtype_code;
  struct D {
    const char* name;
    dtype_code code;
    uint8_t bits;
  };
  static const D table[] = {{"float16", dtype_code::Float, 16}, {"float32", dtype_code::Float, 32},
                            {"float64", dtype_code::Float, 64}, {"int8", dtype_code::Int, 8},
                            {"int16", dtype_code::Int, 16},     {"int32", dtype_code::Int, 32},
                            {"uint8", dtype_code::UInt, 8},     {"uint16", dtype_code::UInt, 16}};
  for (const D& d : table)
    if (s == d.name) {
      *size = d.bits / 8;
      return {uint8_t(d.code), d.bits, 1};
    }
  throw std::invalid_argument("unknown dtype '" + s +
                              "' (valid: float16, float32, float64, int8, int16, int32, uint8, uint16)");
}

// A DLPack-capable 1-D array of `dtype` over the whole buffer (no copy), keeping it alive.
nb::ndarray<nb::array_api> dlpack_array(std::shared_ptr<Buffer> b, const std::string& dtype) {
  size_t es = 0;
  nb::dlpack::dtype dt = parse_dtype(dtype, &es);
  Buffer::Address a;
  {
    nb::gil_scoped_release r;  // address() waits for the backend's outstanding work (core/backend.h)
    a = b->address();
  }
  if (!a.ptr) throw std::invalid_argument("this buffer has no address that DLPack can describe");
  auto* keep = new std::shared_ptr<Buffer>(b);
  nb::capsule owner(keep, [](void* q) noexcept { delete static_cast<std::shared_ptr<Buffer>*>(q); });
  size_t shape[1] = {b->nbytes() / es};
  return nb::ndarray<nb::array_api>(a.ptr, 1, shape, owner, nullptr, dt, a.device_type, a.device_id);
}

// One kernel argument from Python: a Buffer, an int or a float (a bool is refused: it is an int in
// Python, and a flag passed by mistake would otherwise launch as 0 or 1).
Arg to_arg(nb::handle h) {
  if (nb::isinstance<Buffer>(h)) return Arg(nb::cast<Buffer*>(h));
  if (PyBool_Check(h.ptr())) throw std::invalid_argument("kernel arguments must be Buffers, ints or floats, not bool");
  if (PyLong_Check(h.ptr())) return Arg(int64_t(nb::cast<int64_t>(h)));
  if (PyFloat_Check(h.ptr())) return Arg(nb::cast<double>(h));
  throw std::invalid_argument("kernel arguments must be Buffers, ints or floats, got " +
                              std::string(nb::str(nb::handle(h.type())).c_str()));
}

// The arguments of `seq` into `out` (cleared first). A tuple or list is read by index, without
// the iterator protocol: Kernel.launch is the dispatch study's Python path, where every step
// between the call and Kernel::launch is overhead (docs/design/studies.md, "Dispatch latency").
void to_args(nb::handle seq, std::vector<Arg>& out) {
  out.clear();
  PyObject* o = seq.ptr();
  if (PyTuple_Check(o)) {
    const Py_ssize_t n = PyTuple_GET_SIZE(o);
    for (Py_ssize_t i = 0; i < n; ++i) out.push_back(to_arg(PyTuple_GET_ITEM(o, i)));
  } else if (PyList_Check(o)) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(o); ++i) out.push_back(to_arg(PyList_GET_ITEM(o, i)));
  } else {
    for (nb::handle h : seq) out.push_back(to_arg(h));
  }
}

std::vector<Arg> to_args(nb::handle seq) {
  std::vector<Arg> out;
  to_args(seq, out);
  return out;
}

Constants to_constants(const nb::dict& d) {
  Constants c;
  for (auto [k, v] : d) {
    std::string name = nb::cast<std::string>(k);
    if (PyBool_Check(v.ptr())) throw std::invalid_argument("constant '" + name + "' must be an int or float, not bool");
    if (PyLong_Check(v.ptr())) c[name] = nb::cast<int64_t>(v);
    else if (PyFloat_Check(v.ptr())) c[name] = nb::cast<double>(v);
    else throw std::invalid_argument("constant '" + name + "' must be an int or float");
  }
  return c;
}

// A texture argument of Backend.render_pass: None (no texture), bytes, or a C-contiguous uint8 array.
std::vector<uint8_t> to_texels(nb::handle h) {
  if (h.is_none()) return {};
  if (nb::isinstance<nb::bytes>(h)) {
    nb::bytes b = nb::borrow<nb::bytes>(h);
    const auto* p = static_cast<const uint8_t*>(b.data());
    return std::vector<uint8_t>(p, p + b.size());
  }
  nb::ndarray<const uint8_t, nb::c_contig, nb::device::cpu> a;
  if (!nb::try_cast(h, a, false))
    throw std::invalid_argument("texture must be None, bytes or a C-contiguous uint8 array, got " +
                                std::string(nb::str(nb::handle(h.type())).c_str()));
  const uint8_t* p = a.data();
  return std::vector<uint8_t>(p, p + a.size());
}

uint32_t u32(int64_t v, const char* what) {
  if (v < 0 || v > int64_t(0xffffffffll))
    throw std::invalid_argument(std::string(what) + " = " + std::to_string(v) +
                                " is out of range (valid: 0 to 4294967295)");
  return uint32_t(v);
}

uint64_t positive(int64_t v, const char* what) {
  if (v < 1)
    throw std::invalid_argument(std::string(what) + " = " + std::to_string(v) + " is out of range (valid: 1 or more)");
  return uint64_t(v);
}

}  // namespace

nb::bytes to_bytes(const std::vector<uint8_t>& v) {
  return nb::bytes(reinterpret_cast<const char*>(v.data()), v.size());
}

nb::dict to_dict(const Info& info) {
  nb::dict d;
  for (const auto& item : info) {
    const char* key = item.first.c_str();
    std::visit([&](const auto& x) { d[key] = x; }, item.second);
  }
  return d;
}

namespace {

// Buffer.read: `count` elements (all when negative) of `dtype` from byte `offset`, copied into a new
// NumPy array after the backend's outstanding launches. ValueError for an unknown dtype or an
// offset outside the buffer.
nb::ndarray<nb::numpy> read_array(Buffer& b, const std::string& dtype, int64_t count, int64_t offset) {
  size_t es = 0;
  nb::dlpack::dtype dt = parse_dtype(dtype, &es);
  if (offset < 0 || size_t(offset) > b.nbytes()) throw std::invalid_argument("offset out of range");
  size_t n = count < 0 ? (b.nbytes() - size_t(offset)) / es : size_t(count);
  char* data = new char[std::max<size_t>(n * es, 1)];
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<char*>(p); });
  {
    nb::gil_scoped_release r;
    b.read(data, n * es, size_t(offset));
  }
  size_t shape[1] = {n};
  return nb::ndarray<nb::numpy>(data, 1, shape, owner, nullptr, dt);
}

// Buffer.view: a NumPy array of `dtype` aliasing the host-visible buffer (no copy), keeping it
// alive. ValueError for an unknown dtype or a buffer that is not host-visible.
nb::ndarray<nb::numpy> view_array(std::shared_ptr<Buffer> b, const std::string& dtype) {
  size_t es = 0;
  nb::dlpack::dtype dt = parse_dtype(dtype, &es);
  void* p = nullptr;
  {
    nb::gil_scoped_release r;  // host_ptr() waits for the backend's outstanding work
    p = b->host_ptr();
  }
  if (!p) throw std::invalid_argument("this buffer is not host-visible; use read()/write()");
  auto* keep = new std::shared_ptr<Buffer>(b);
  nb::capsule owner(keep, [](void* q) noexcept { delete static_cast<std::shared_ptr<Buffer>*>(q); });
  size_t shape[1] = {b->nbytes() / es};
  return nb::ndarray<nb::numpy>(p, 1, shape, owner, nullptr, dt);
}

// Buffer's copies in and out: write, fill32, read and read_into.
void bind_buffer_copies(nb::class_<Buffer>& buffer) {
  buffer
      .def(
          "write",
          [](Buffer& b, nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu> a, int64_t offset) {
            if (offset < 0) throw std::invalid_argument("offset must be >= 0");
            const size_t n = a.nbytes();
            const void* p = a.data();
            nb::gil_scoped_release r;
            b.write(p, n, size_t(offset));
          },
          "array"_a, "offset"_a = 0,
          "Copy a C-contiguous array's bytes into the buffer at a byte offset, after the backend's\n"
          "outstanding launches (raising their error).")
      .def(
          "fill32",
          [](Buffer& b, uint32_t value, int64_t nbytes, int64_t offset) {
            if (nbytes < 0 || offset < 0) throw std::invalid_argument("fill32: nbytes and offset must be >= 0");
            nb::gil_scoped_release r;
            b.fill32(value, size_t(nbytes), size_t(offset));
          },
          "value"_a, "nbytes"_a, "offset"_a = 0,
          "Fill nbytes at a byte offset with the 32-bit word value repeated, as it lies in memory (any\n"
          "element of 1, 2 or 4 bytes whose repetition it is), after the backend's outstanding launches;\n"
          "on CUDA on the device, without a copy. ValueError unless nbytes and offset are multiples of 4\n"
          "within the buffer.")
      .def("read", &read_array, "dtype"_a, "count"_a = -1, "offset"_a = 0,
           "Copy `count` elements (default: all) of `dtype` out of the buffer into a new NumPy array, after\n"
           "the backend's outstanding launches (raising their error): no synchronize() is needed first.")
      .def(
          "read_into",
          [](Buffer& b, nb::ndarray<nb::c_contig, nb::device::cpu> a, int64_t offset) {
            const size_t n = a.nbytes();
            if (offset < 0 || size_t(offset) > b.nbytes() || n > b.nbytes() - size_t(offset))
              throw std::invalid_argument("read_into: " + std::to_string(n) + " bytes at offset " +
                                          std::to_string(offset) + " do not fit the buffer's " +
                                          std::to_string(b.nbytes()) + " bytes");
            void* p = a.data();
            nb::gil_scoped_release r;
            b.read(p, n, size_t(offset));
          },
          "array"_a, "offset"_a = 0,
          "Copy the buffer's bytes at a byte offset into a writable C-contiguous array, filling it, after\n"
          "the backend's outstanding launches (raising their error).\n"
          "Reusing one array is faster than read() on discrete GPUs: pages the process already\n"
          "touched are not faulted in again by the copy (docs/design/budgets.md, \"Time budgets\").");
}

// Buffer's views of its memory without a copy: view, dlpack and the DLPack protocol.
void bind_buffer_views(nb::class_<Buffer>& buffer) {
  buffer
      .def("view", &view_array, "dtype"_a,
           "A NumPy array aliasing the buffer (no copy); keeps the buffer alive. Waits for the backend's\n"
           "outstanding launches first (raising their error); later ones are the caller's to synchronize().")
      .def("dlpack", &dlpack_array, "dtype"_a = "uint8",
           "A 1-D array of `dtype` aliasing the whole buffer (no copy), on the buffer's device, that\n"
           "implements the DLPack protocol: torch.from_dlpack(buf.dlpack('float32')), cupy.from_dlpack(...),\n"
           "numpy.from_dlpack(...) for host-visible buffers. Keeps the buffer alive. Waits for the backend's\n"
           "outstanding launches first (raising their error); later launches are the caller's to\n"
           "synchronize() before reading through the array.")
      .def(
          "__dlpack__",
          [](std::shared_ptr<Buffer> b, nb::kwargs kwargs) {
            nb::object arr = nb::cast(dlpack_array(std::move(b), "uint8"));
            return arr.attr("__dlpack__")(**kwargs);
          },
          nb::sig("def __dlpack__(self, **kwargs: object) -> object"),
          "DLPack export of the buffer's bytes (uint8); see dlpack() for typed views.")
      .def(
          "__dlpack_device__", [](std::shared_ptr<Buffer> b) { return b->dlpack_device(); },
          // No wait for the launches in flight (address() waits; __dlpack__ does that): the device is
          // a constant of the buffer, and a consumer asks for it before it asks for the memory.
          "(DLPack device type, device id): (1, 0) for host memory, (2, index) for CUDA memory; never\n"
          "waits for the launches in flight.");
}

// Buffer: device memory.
void bind_buffer(nb::module_& m) {
  nb::class_<Buffer> buffer(m, "Buffer",
                            "Device memory. On host-visible backends view() exposes it to NumPy without a copy.");
  buffer.def_prop_ro("nbytes", &Buffer::nbytes, "Size in bytes.");
  bind_buffer_copies(buffer);
  bind_buffer_views(buffer);
}

// Kernel.timeline's result as the dict it returns (core/backend.h, Timeline).
nb::dict timeline_dict(const Timeline& tl) {
  nb::dict d;
  d["events"] = tl.events;
  d["t"] = tl.t;
  d["submit"] = tl.submit;
  d["start"] = tl.start;
  d["clock"] = tl.clock;
  d["uncertainty_s"] = tl.uncertainty_s;
  return d;
}

// What a Kernel says of itself: entry, wave_items, block, simd_width, max_block, timer and clock.
void bind_kernel_properties(nb::class_<Kernel>& kernel) {
  kernel.def_prop_ro("entry", &Kernel::entry)
      .def_prop_ro("wave_items", &Kernel::wave_items,
                   "Work items the device runs at once (SMs × resident blocks × block size on CUDA);\n"
                   "0 where unknown or meaningless (CPU). Launch whole waves to keep every SM busy.")
      .def_prop_ro("block", &Kernel::block,
                   "Threads per block (CUDA) or threadgroup (Metal) this kernel launches with (the constant\n"
                   "BLOCK); 0 where there is none (CPU, vendor-library routines).")
      .def_prop_ro("simd_width", &Kernel::simd_width,
                   "Threads that execute together: the warp size (CUDA) or the pipeline's\n"
                   "threadExecutionWidth (Metal); 0 on the CPU. Block sizes are multiples of it.")
      .def_prop_ro("max_block", &Kernel::max_block,
                   "The most threads per block / threadgroup a launch of this build may have (CUDA:\n"
                   "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, at most BLOCK under __launch_bounds__(BLOCK);\n"
                   "Metal: maxTotalThreadsPerThreadgroup); 0 on the CPU.")
      .def_prop_ro("timer", &Kernel::timer,
                   "How the last time() call measured, where a backend has more than one way (Metal:\n"
                   "counter-sample-buffer timestamps at the pass boundaries, or the command buffer's\n"
                   "GPUEndTime - GPUStartTime); empty otherwise.")
      .def_prop_ro(
          "clock",
          [](const Kernel& k) {
            ClockReading c = k.clock();
            nb::dict d;
            d["mhz"] = nb::cast(c.mhz);
            d["method"] = c.method;
            return d;
          },
          "The clock the last time() call's samples ran at, measured (docs/design/clocks.md, \"Clocks\"): a dict\n"
          "{\"mhz\": [MHz per sample, or per group of consecutive samples; at most 64], \"method\": how it\n"
          "was measured, or why not}. CUDA: %clock64 / %globaltimer in the kernel (shaders/cuda/clock.cuh)\n"
          "or, for cuBLAS, a probe kernel around each sample; CPU: each worker's core cycles over its time\n"
          "on the CPU (perf_event_open), where allowed; empty \"mhz\" where not measured.");
}

// A Kernel's runs: time (device-timed samples), launch (one launch, not waited for) and timeline
// (the instants of each launch's steps).
void bind_kernel_runs(nb::class_<Kernel>& kernel) {
  kernel
      .def(
          "time",
          [](Kernel& k, nb::sequence args, int64_t work_items, int64_t batch, int64_t reps, bool clock) {
            std::vector<Arg> a = to_args(args);
            uint64_t w = positive(work_items, "work_items"), b = positive(batch, "batch"), r = positive(reps, "reps");
            nb::gil_scoped_release release;
            return k.time(a, w, b, r, clock);
          },
          "args"_a, "work_items"_a, "batch"_a = 1, "reps"_a = 1, "clock"_a = true,
          "Run `reps` samples of `batch` back-to-back launches of `work_items` work items; return the\n"
          "device-timed seconds of each sample (not per launch). Blocks; releases the GIL.\n"
          "`clock` False: the samples' clock is not wanted (warm-up, calibration, spin-up), so no clock\n"
          "probe runs among them and `clock` then says it was not measured.")
      .def(
          "launch",
          [](Kernel& k, nb::sequence args, int64_t work_items) {
            // One vector per thread, reused: no allocation per launch. Where Kernel::launch only
            // enqueues (launch_enqueues(): CUDA), the GIL stays held: nothing another thread needs
            // waits on an enqueue, so releasing it would be overhead (docs/design/studies.md, "Dispatch latency").
            thread_local std::vector<Arg> a;
            to_args(args, a);
            const uint64_t w = positive(work_items, "work_items");
            if (k.launch_enqueues()) {
              k.launch(a, w);
            } else {
              nb::gil_scoped_release release;
              k.launch(a, w);
            }
          },
          "args"_a, "work_items"_a = 1,
          "Enqueue one launch of `work_items` work items and return without waiting where the device\n"
          "allows it (CUDA: the backend's stream; Metal: one committed command buffer); the CPU runs\n"
          "it on its thread pool before returning. Backend.synchronize() waits for it. A GEMM\n"
          "(Backend.gemm) launches one product (work_items 1). Raises ValueError for bad arguments.")
      .def(
          "timeline",
          [](Kernel& k, nb::sequence args, int64_t work_items, int64_t reps) {
            std::vector<Arg> a = to_args(args);
            const uint64_t w = positive(work_items, "work_items"), r = positive(reps, "reps");
            Timeline tl;
            {
              nb::gil_scoped_release release;
              tl = k.timeline(a, w, r);
            }
            return timeline_dict(tl);
          },
          "args"_a, "work_items"_a = 1, "reps"_a = 1,
          "Run `reps` launches, each waited for, and return the instants of each launch's steps:\n"
          "{'events': [names], 't': [[seconds since the call, per event] per launch], 'submit': event,\n"
          "'start': event, 'clock': str, 'uncertainty_s': float} (core/backend.h, Timeline).\n"
          "Raises UnsupportedError where the backend cannot observe the steps; on CUDA the kernel must\n"
          "write %globaltimer into its first argument (dispatch.cu's *_stamp kernels), else ValueError.");
}

// Kernel: a compiled kernel or a vendor library routine.
void bind_kernel(nb::module_& m) {
  nb::class_<Kernel> kernel(m, "Kernel", "A compiled kernel (or a vendor library routine) that can be timed.");
  bind_kernel_properties(kernel);
  bind_kernel_runs(kernel);
}

// RenderPass: a render pass of the graphics study.
void bind_render_pass(nb::module_& m) {
  nb::class_<RenderPass>(m, "RenderPass",
                         "A render pass of the graphics study, built by Backend.render_pass: ready to time and read.")
      .def_prop_ro("timer", &RenderPass::timer,
                   "How the last time() call measured (Metal: the command buffer's GPUEndTime - GPUStartTime).")
      .def(
          "time",
          [](RenderPass& p, int64_t batch, int64_t reps) {
            const uint64_t b = positive(batch, "batch"), r = positive(reps, "reps");
            nb::gil_scoped_release release;
            return p.time(b, r);
          },
          "batch"_a = 1, "reps"_a = 1,
          "Run `reps` samples of `batch` render passes back to back (each: clear, one instanced draw);\n"
          "return the device-timed seconds of each sample (not per pass). Blocks; releases the GIL.")
      .def(
          "read",
          [](RenderPass& p) {
            std::vector<uint8_t> data;
            {
              nb::gil_scoped_release release;
              data = p.read();
            }
            return to_bytes(data);
          },
          "The target after one pass with store action store: height * width * bytes-per-pixel bytes,\n"
          "rows packed, top row first.")
      .def(
          "fragment_invocations",
          [](RenderPass& p) {
            nb::gil_scoped_release release;
            return p.fragment_invocations();
          },
          "Fragment-shader invocations of one pass, or -1 where the device cannot count them.");
}

// Backend.render_pass: a render pass of the graphics study from its spec (core/backend.h, RenderSpec).
void bind_backend_render_pass(nb::class_<Backend>& backend) {
  backend.def(
      "render_pass",
      [](Backend& b, const std::string& source, const std::string& vertex, const std::string& fragment,
         nb::dict constants, const std::string& format, int64_t width, int64_t height, int64_t instances,
         bool blend_max, bool store, const std::vector<int64_t>& uniforms, nb::handle texture, int64_t texture_size,
         bool linear) {
        RenderSpec spec;
        spec.source = source;
        spec.vertex = vertex;
        spec.fragment = fragment;
        spec.constants = to_constants(constants);
        spec.format = format;
        spec.width = u32(width, "width");
        spec.height = u32(height, "height");
        spec.instances = u32(instances, "instances");
        spec.blend_max = blend_max;
        spec.store = store;
        for (int64_t v : uniforms) spec.uniforms.push_back(u32(v, "a uniform word"));
        spec.texture = to_texels(texture);
        spec.texture_size = u32(texture_size, "texture_size");
        spec.linear = linear;
        nb::gil_scoped_release r;
        return b.render_pass(spec);
      },
      "source"_a, "vertex"_a, "fragment"_a, nb::kw_only(), "constants"_a = nb::dict(), "format"_a, "width"_a,
      "height"_a, "instances"_a = 1, "blend_max"_a = false, "store"_a = true, "uniforms"_a = std::vector<int64_t>(),
      "texture"_a = nb::none(), "texture_size"_a = 0, "linear"_a = false,
      nb::sig("def render_pass(self, source: str, vertex: str, fragment: str, *, constants: dict = {}, "
              "format: str, width: int, height: int, instances: int = 1, blend_max: bool = False, "
              "store: bool = True, uniforms: Sequence[int] = [], "
              "texture: bytes | Annotated[NDArray, dict(dtype='uint8', order='C', device='cpu')] | None = None, "
              "texture_size: int = 0, linear: bool = False) -> RenderPass"),
      "A render pass of the graphics study (core/backend.h, RenderSpec): `vertex` draws a fullscreen\n"
      "triangle `instances` times into a width x height `format` target (r8unorm, rgba8unorm,\n"
      "rgba16float, rgba32float) cleared to zero, `fragment` specialised by `constants`; blend_max\n"
      "turns on blend operation max (factors one); store=False uses store action don't-care;\n"
      "`uniforms` (uint32 words) are the fragment function's [[buffer(0)]], `texture` (RGBA8,\n"
      "texture_size^2 * 4 bytes) its [[texture(0)]], sampled with linear or nearest filtering and\n"
      "repeat addressing. Raises ValueError (bad spec), CompileError, UnsupportedError (CPU, CUDA, or\n"
      "a format the device cannot render or blend).");
}

// Backend: one device of one backend; its buffers, kernels, GEMMs and render passes.
void bind_backend(nb::module_& m) {
  nb::class_<Backend> backend(m, "Backend", "One device of one backend: 'cpu', 'cuda' or 'metal'.");
  backend
      .def(nb::new_([](const std::string& name, int index) {
             nb::gil_scoped_release r;
             return make_backend(name, index);
           }),
           "name"_a, "index"_a = 0,
           "Open device `index` of backend `name`. Raises ValueError (unknown name), UnsupportedError\n"
           "(backend not built) or DeviceError (no such device).")
      .def(
          "info", [](const Backend& b) { return to_dict(b.info()); }, "Device description as a dict.")
      .def(
          "alloc",
          [](Backend& b, int64_t nbytes) {
            if (nbytes < 1)
              throw std::invalid_argument("buffer size " + std::to_string(nbytes) +
                                          " is out of range (valid: 1 byte or more)");
            nb::gil_scoped_release r;
            return b.alloc(size_t(nbytes));
          },
          "nbytes"_a, "Allocate a zero-filled buffer of `nbytes` bytes.")
      .def(
          "compile",
          [](Backend& b, const std::string& source, const std::string& entry, nb::dict constants) {
            Constants c = to_constants(constants);
            nb::gil_scoped_release r;
            return b.compile(source, entry, c);
          },
          "source"_a, "entry"_a, "constants"_a = nb::dict(),
          "Compile `entry` of `source` specialised by `constants`; cached. Raises CompileError.")
      .def(
          "gemm",
          [](Backend& b, const std::string& dtype, int64_t m, int64_t n, int64_t k) { return b.gemm(dtype, m, n, k); },
          "dtype"_a, "m"_a, "n"_a, "k"_a,
          "The vendor library's row-major C[m×n] = A[m×k]·B[k×n] as a Kernel taking (A, B, C).\n"
          "Raises UnsupportedError for a precision the backend lacks.");
  bind_backend_render_pass(backend);
  backend.def("synchronize", [](Backend& b) {
    nb::gil_scoped_release r;
    b.synchronize();
  });
}

// The native launch loops (core/backend.h): launch_throughput and launch_round_trip.
void bind_launch_loops(nb::module_& m) {
  m.def(
      "launch_throughput",
      [](Backend& b, Kernel& k, nb::sequence args, int64_t work_items, int64_t launches, int64_t reps) {
        std::vector<Arg> a = to_args(args);
        const uint64_t w = positive(work_items, "work_items"), n = positive(launches, "launches"),
                       r = positive(reps, "reps");
        nb::gil_scoped_release release;
        return launch_throughput(b, k, a, w, n, r);
      },
      "backend"_a, "kernel"_a, "args"_a, "work_items"_a = 1, "launches"_a = 1, "reps"_a = 1,
      "Native loop: `reps` samples of `launches` kernel.launch(args, work_items) calls and one\n"
      "backend.synchronize(); host steady-clock seconds per sample. The floor of the same loop in Python.");
  m.def(
      "launch_round_trip",
      [](Backend& b, Kernel& k, nb::sequence args, int64_t work_items, int64_t reps) {
        std::vector<Arg> a = to_args(args);
        const uint64_t w = positive(work_items, "work_items"), r = positive(reps, "reps");
        nb::gil_scoped_release release;
        return launch_round_trip(b, k, a, w, r);
      },
      "backend"_a, "kernel"_a, "args"_a, "work_items"_a = 1, "reps"_a = 1,
      "Native loop: `reps` samples of one kernel.launch(args, work_items) and one backend.synchronize();\n"
      "host steady-clock seconds each.");
}

// The backends this build knows (backends()).
void bind_backend_list(nb::module_& m) {
  m.def(
      "backends",
      []() {
        nb::list out;
        for (const BackendStatus& s : available_backends()) {
          nb::dict d;
          d["name"] = s.name;
          d["compiled"] = s.compiled;
          d["devices"] = s.devices;
          d["reason"] = s.reason;
          out.append(d);
        }
        return out;
      },
      "Every backend known to this build: name, compiled (bool), devices (count), reason.");
}

}  // namespace

void init_backend(nb::module_& m) {
  bind_buffer(m);
  bind_kernel(m);
  bind_render_pass(m);
  bind_backend(m);
  bind_launch_loops(m);
  bind_backend_list(m);
}

}  // namespace ar::bind
