// An autorelease pool that no exception crosses (Objective-C++, ARC; native/metal/*.mm only).
//
// Clang's ARC specification ("Objective-C Automatic Reference Counting", section "@autoreleasepool"):
// when the block is left by an exception the pool is not drained. A C++ exception that unwinds
// through @autoreleasepool therefore leaves the pool pushed on the calling thread, holding every
// object autoreleased inside it until an enclosing pool is popped; a Python thread has none, so
// until the thread exits. pooled() runs the body inside the pool, keeps whatever it throws as a
// value (std::exception_ptr), lets the pool pop normally, and only then rethrows.
#pragma once

#import <Foundation/Foundation.h>

#include <exception>
#include <utility>

namespace ar::metal {

template <class Body>
void pooled(Body&& body) {
  std::exception_ptr failure;
  @autoreleasepool {
    try {
      std::forward<Body>(body)();
    } catch (...) {  // C++ exceptions, and NSExceptions (one unwinder on arm64 and x86_64)
      failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace ar::metal
