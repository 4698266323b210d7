# ember_cc_test(NAME SRCS a.cc b.cc DEPS lib1 lib2): one gtest binary registered with ctest.
function(ember_cc_test name)
  cmake_parse_arguments(T "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${T_SRCS})
  target_link_libraries(${name} PRIVATE ${T_DEPS} GTest::gtest GTest::gtest_main Threads::Threads)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT 600)
endfunction()
