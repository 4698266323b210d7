# ember_cc_test(name SRCS a.cc b.cc DEPS lib1 lib2 [CORPUS_CASES filter]) (or NAME name ...): one
# gtest binary registered with ctest. CORPUS_CASES names, as a gtest filter, the cases that walk the
# whole StableHLO corpus in ../shared (thousands of programs): the Release build runs them, the
# sanitizer build (EMBER_SANITIZE) runs the rest of the binary, its unit cases, and neither builds
# (by default) nor runs a binary whose filter is "*" (the corpus readers meet the sanitizers in
# scripts/fuzz.sh instead, seeded from the same corpus). COST (seconds under the sanitizers) starts
# the long tests first where ctest has no timings of its own yet (a fresh build folder, as in CI),
# so the others fill the remaining cores around them. Every such binary reuses the tests'
# precompiled header (tests/CMakeLists.txt).
function(ember_cc_test)
  set(args ${ARGN})
  list(GET args 0 first)
  if(first STREQUAL "NAME")
    list(REMOVE_AT args 0)
  endif()
  list(POP_FRONT args name)
  cmake_parse_arguments(T "" "CORPUS_CASES;COST" "SRCS;DEPS" ${args})
  set(corpus_only)
  set(filter_args)
  if(EMBER_SANITIZE AND T_CORPUS_CASES STREQUAL "*")
    set(corpus_only EXCLUDE_FROM_ALL)
    message(STATUS "Ember: sanitizer build: ${name} walks the StableHLO corpus only: "
                   "built and run in the Release build")
  elseif(EMBER_SANITIZE AND T_CORPUS_CASES)
    set(filter_args "--gtest_filter=-${T_CORPUS_CASES}")
    message(STATUS
      "Ember: sanitizer build: ${name} runs without its corpus cases ${T_CORPUS_CASES}")
  endif()
  add_executable(${name} ${corpus_only} ${T_SRCS})
  target_link_libraries(${name} PRIVATE ${T_DEPS} GTest::gtest GTest::gtest_main Threads::Threads)
  target_precompile_headers(${name} REUSE_FROM ember_test_pch)
  if(corpus_only)
    return()
  endif()
  add_test(NAME ${name} COMMAND ${name} ${filter_args})
  set_tests_properties(${name} PROPERTIES TIMEOUT 600)
  if(T_COST)
    set_tests_properties(${name} PROPERTIES COST ${T_COST})
  endif()
endfunction()
