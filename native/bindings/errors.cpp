// C++ errors -> Python exceptions. BackendError derives from RuntimeError; DeviceError,
// CompileError (with a `log` attribute holding the compiler output) and UnsupportedError derive
// from it. std::invalid_argument stays nanobind's ValueError. DeviceStopped (a wait outlasted its
// bound, core/waits.h) becomes apple_roofline.errors.DeviceStopped.
#include <Python.h>
#include <nanobind/stl/string.h>

#include "../core/errors.h"
#include "bindings.h"

namespace nb = nanobind;

namespace ar::bind {

namespace {
PyObject* g_backend = nullptr;
PyObject* g_device = nullptr;
PyObject* g_compile = nullptr;
PyObject* g_unsupported = nullptr;

PyObject* make_type(nb::module_& m, const char* name, PyObject* base, const char* doc) {
  std::string qual = std::string("apple_roofline._core.") + name;
  PyObject* t = PyErr_NewExceptionWithDoc(qual.c_str(), doc, base, nullptr);
  if (!t) throw nb::python_error();
  m.attr(name) = nb::handle(t);
  return t;
}

void raise(PyObject* type, const char* what) { PyErr_SetString(type, what); }
}  // namespace

void init_errors(nb::module_& m) {
  g_backend = make_type(m, "BackendError", PyExc_RuntimeError, "An error raised by a backend (a RuntimeError).");
  g_device = make_type(m, "DeviceError", g_backend, "The device is missing, lost, out of memory, or a runtime call on it failed.");
  g_compile = make_type(m, "CompileError", g_backend, "A kernel failed to compile; `log` holds the compiler's output.");
  g_unsupported = make_type(m, "UnsupportedError", g_backend, "The backend or device lacks an optional capability.");
  // Class-level default so `CompileError.log` exists (and is typed in the stub) even when raised
  // from Python; instances raised by the core carry the compiler's log.
  PyObject* empty = PyUnicode_FromString("");
  if (!empty || PyObject_SetAttrString(g_compile, "log", empty) != 0) throw nb::python_error();
  Py_DECREF(empty);

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ar::CompileError& e) {
      PyObject* inst = PyObject_CallFunction(g_compile, "s", e.what());
      if (!inst) return;
      PyObject* log = PyUnicode_DecodeUTF8(e.log().data(), Py_ssize_t(e.log().size()), "replace");
      if (log) {
        PyObject_SetAttrString(inst, "log", log);
        Py_DECREF(log);
      }
      PyErr_SetObject(g_compile, inst);
      Py_DECREF(inst);
    } catch (const ar::DeviceStopped& e) {
      // apple_roofline.errors.DeviceStopped (not a BackendError: no caller that skips a failed case
      // may catch it and go on measuring on a device that stopped answering).
      try {
        nb::object type = nb::module_::import_("apple_roofline.errors").attr("DeviceStopped");
        PyErr_SetObject(type.ptr(), type(e.pass(), e.bound_s()).ptr());
      } catch (nb::python_error& failed) {  // the package cannot be imported: the same words, as a DeviceError
        raise(g_device, e.what());
      }
    } catch (const ar::DeviceError& e) {
      raise(g_device, e.what());
    } catch (const ar::UnsupportedError& e) {
      raise(g_unsupported, e.what());
    } catch (const ar::BackendError& e) {
      raise(g_backend, e.what());
    }
  });
}

}  // namespace ar::bind
