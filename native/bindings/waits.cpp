// Device waits (core/waits.h) from Python: the interrupt hook that runs Python's signal handlers
// while a native wait is in flight, and the calling thread's wait limit.
#include <Python.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <string>
#include <utility>

#include "../core/waits.h"
#include "bindings.h"

namespace nb = nanobind;

namespace ar::bind {

namespace {
// Called by a native wait every kInterruptSliceS with the GIL released (the binding released it):
// takes the GIL and runs the signal handlers (they run only on the main thread; elsewhere this
// returns at once). A handler that raised (KeyboardInterrupt for Ctrl-C, SIGTERM and SIGHUP under
// the command line) abandons the wait: the Python error travels as nb::python_error, which the
// binding's caller gets back as the same exception.
void check_python_signals() {
  nb::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw nb::python_error();
}
}  // namespace

void init_waits(nb::module_& m) {
  ar::set_interrupt_hook(&check_python_signals);
  m.attr("WAIT_CAP_S") = ar::kWaitCapS;
  m.attr("WAIT_INTERRUPT_SLICE_S") = ar::kInterruptSliceS;
  m.def(
      "set_wait_limit",
      [](double seconds, std::string pass) {
        ar::WaitLimit previous = ar::set_wait_limit(seconds, std::move(pass));
        return std::make_pair(previous.seconds, previous.pass);
      },
      nb::arg("seconds"), nb::arg("pass_name"),
      "Sets the calling thread's device-wait limit: its native waits (CUDA stream waits, Metal command\n"
      "buffers) that last longer than `seconds` raise apple_roofline.errors.DeviceStopped naming\n"
      "`pass_name`. seconds <= 0 means WAIT_CAP_S. Returns the previous\n"
      "(seconds, pass_name), to restore it.");
  m.def(
      "wait_limit",
      []() {
        ar::WaitLimit now = ar::wait_limit();
        return std::make_pair(now.seconds, now.pass);
      },
      "The calling thread's device-wait limit: (seconds, pass_name).");
}

}  // namespace ar::bind
