# The git revision of a source tree, for the results files' provenance (docs/design/files.md, "Results
# files"): "<commit>" or "<commit>-dirty" (tracked files differ from it) when SOURCE_DIR is the top
# level of its own git checkout, else "" -- a copy of the source inside another repository (an
# unpacked sdist in a monorepo, a vendored copy) must not record that repository's commit. The
# same rule as apple_roofline.provenance.checkout_revision.
#
#   include(cmake/git_revision.cmake)
#   ar_git_revision("${CMAKE_SOURCE_DIR}" AR_GIT_REVISION)
#
# or, as a script (the test's way): cmake -DSOURCE_DIR=<dir> -P cmake/git_revision.cmake
# prints "GIT_REVISION=<revision>" on stderr.

function(ar_git_revision source_dir out_var)
  set(revision "")
  if(NOT GIT_EXECUTABLE)
    find_program(GIT_EXECUTABLE NAMES git)
  endif()
  if(GIT_EXECUTABLE)
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${source_dir}" rev-parse --show-toplevel
      OUTPUT_VARIABLE toplevel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
    get_filename_component(source_real "${source_dir}" REALPATH)
    if(rc EQUAL 0)
      get_filename_component(toplevel_real "${toplevel}" REALPATH)
    endif()
    if(rc EQUAL 0 AND toplevel_real STREQUAL source_real)
      execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${source_dir}" rev-parse HEAD
        OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
      if(rc EQUAL 0)
        set(revision "${head}")
        execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${source_dir}" status --porcelain --untracked-files=no
          OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
        if(dirty)
          string(APPEND revision "-dirty")
        endif()
      endif()
    endif()
  endif()
  set(${out_var} "${revision}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(NOT DEFINED SOURCE_DIR)
    message(FATAL_ERROR "usage: cmake -DSOURCE_DIR=<dir> -P git_revision.cmake")
  endif()
  ar_git_revision("${SOURCE_DIR}" revision)
  message("GIT_REVISION=${revision}")
endif()
