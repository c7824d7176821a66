# ccsim_add_tests(DIR LIBS...): one cmocka executable per tests/<module>/test_<file>.c.
# A test file names its ctest label on a line "// ctest-label: unit|e2e|validation|slow"
# (default unit) and may name a timeout with "// ctest-timeout: SECONDS". Globbing keeps
# helpers working on different modules from editing the same CMakeLists.
# what every test's environment holds: where the sources are, and with CCSIM_TSAN the
# suppressions of what libzmq's and libsodium's own threads do
set(CCSIM_TEST_ENV "CCSIM_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
if(CCSIM_TSAN)
  list(APPEND CCSIM_TEST_ENV "TSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/tsan.supp")
endif()

function(ccsim_add_tests dir)
  file(GLOB srcs CONFIGURE_DEPENDS ${dir}/test_*.c)
  foreach(src ${srcs})
    get_filename_component(name ${src} NAME_WE)
    get_filename_component(mod ${dir} NAME)
    set(target ${mod}_${name})
    add_executable(${target} ${src})
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests/common)
    target_link_libraries(${target} PRIVATE ${ARGN} PkgConfig::CMOCKA m)
    file(STRINGS ${src} label_line REGEX "^// ctest-label: ")
    set(label unit)
    if(label_line)
      string(REGEX REPLACE "^// ctest-label: *([a-z0-9]+).*" "\\1" label "${label_line}")
    endif()
    file(STRINGS ${src} timeout_line REGEX "^// ctest-timeout: ")
    set(timeout 120)
    if(timeout_line)
      string(REGEX REPLACE "^// ctest-timeout: *([0-9]+).*" "\\1" timeout "${timeout_line}")
    endif()
    add_test(NAME ${target} COMMAND ${target})
    set_tests_properties(${target} PROPERTIES LABELS ${label} TIMEOUT ${timeout}
      ENVIRONMENT "${CCSIM_TEST_ENV}")
  endforeach()
endfunction()
