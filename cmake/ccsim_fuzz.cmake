# ccsim_add_fuzzers(DIR LIBS...): one libFuzzer executable per DIR/fuzz_<name>.c, linked
# with LIBS, when CCSIM_FUZZ is on (clang). The whole build is then compiled for the
# fuzzer's coverage and checked by ASan + UBSan (top-level CMakeLists.txt), so an input that
# reaches past the target's own code (scene compile, physics, geometry) is guided and
# checked there too. Run one: fuzz_scene -max_total_time=60 CORPUS_DIR
function(ccsim_add_fuzzers dir)
  if(NOT CCSIM_FUZZ)
    return()
  endif()
  file(GLOB srcs CONFIGURE_DEPENDS ${dir}/fuzz_*.c)
  foreach(src ${srcs})
    get_filename_component(name ${src} NAME_WE)
    add_executable(${name} ${src})
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(${name} PRIVATE ${ARGN})
  endforeach()
endfunction()
