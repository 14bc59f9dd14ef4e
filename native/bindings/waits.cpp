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

// The calling thread's wait limit and the sliced wait loop behind every native device wait.
void bind_wait_limits(nb::module_& m) {
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
  m.attr("WAIT_SPIN_S") = ar::kSpinS;
  m.attr("WAIT_POLL_MAX_S") = ar::kPollMaxS;
  m.def(
      "wait_in_slices",
      [](nb::callable wait_slice, double limit_s, nb::callable now) {
        // The GIL is held throughout: both callables are Python's (the interrupt hook takes it again).
        return ar::wait_in_slices([&](double s) { return nb::cast<bool>(wait_slice(s)); }, limit_s,
                                  [&] { return nb::cast<double>(now()); });
      },
      nb::arg("wait_slice"), nb::arg("limit_s"), nb::arg("now"),
      "The loop behind every native device wait, on the clock `now()` (seconds): calls wait_slice(s),\n"
      "which blocks at most s seconds and returns True once done, with s at most WAIT_INTERRUPT_SLICE_S\n"
      "and the last slice cut to `limit_s` after the start; runs Python's signal handlers between\n"
      "slices (what they raise propagates). Returns True when done, False once `limit_s` passed.");
}

// The one-shot event a device's callback signals (DeviceCompletion).
void bind_completion(nb::module_& m) {
  nb::class_<ar::Completion>(m, "DeviceCompletion",
                             "A one-shot event a device's callback signals (core/waits.h): what a Metal command\n"
                             "buffer's completed handler and Core ML's completion handler signal, waited on\n"
                             "in slices as the backends wait on it.")
      .def(nb::init<>())
      .def("signal", &ar::Completion::signal, nb::call_guard<nb::gil_scoped_release>(), "Signal it (any thread).")
      .def_prop_ro("signalled", &ar::Completion::signalled)
      .def(
          "wait", [](ar::Completion& c, const std::string& what) { ar::wait_for(c, what); }, nb::arg("what"),
          nb::call_guard<nb::gil_scoped_release>(),
          "Sleep until signalled, within the calling thread's wait limit: DeviceStopped naming the pass\n"
          "(or `what`) past it; signals handled meanwhile.")
      .def(
          "wait_within", [](ar::Completion& c, double limit_s) { return ar::wait_for(c, limit_s); }, nb::arg("limit_s"),
          nb::call_guard<nb::gil_scoped_release>(),
          "Sleep until signalled or `limit_s` seconds passed: True when signalled.")
      .def(
          "poll",
          [](ar::Completion& c, const std::string& what, double spin_s) {
            ar::wait_until([&] { return c.signalled(); }, what, spin_s);
          },
          nb::arg("what"), nb::arg("spin_s") = 0.0, nb::call_guard<nb::gil_scoped_release>(),
          "Wait as a device that can only be polled is waited for (a CUDA stream): poll `signalled`,\n"
          "yielding for `spin_s` (WAIT_SPIN_S for a host-timed wait), then sleeping between polls; the\n"
          "thread's limit and signals as wait().");
}

}  // namespace

void init_waits(nb::module_& m) {
  ar::set_interrupt_hook(&check_python_signals);
  bind_wait_limits(m);
  bind_completion(m);
}

}  // namespace ar::bind
