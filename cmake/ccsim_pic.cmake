# ccsim_add_pic_objects(TARGET): TARGET_pic, an OBJECT library of TARGET's sources compiled
# position-independent, with TARGET's include directories, definitions, options and usage
# requirements. libccsim bundles these into its shared and static libraries; TARGET itself
# stays non-PIC for the physics core and ccsimd, whose speed is measured. Call it in the
# folder that defines TARGET, after its target_* calls (generated sources and per-source
# options are seen from there only).
function(ccsim_add_pic_objects target)
  get_target_property(srcs ${target} SOURCES)
  add_library(${target}_pic OBJECT ${srcs})
  set_target_properties(${target}_pic PROPERTIES POSITION_INDEPENDENT_CODE ON)
  foreach(prop INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS)
    get_target_property(val ${target} ${prop})
    if(val)
      set_property(TARGET ${target}_pic APPEND PROPERTY ${prop} ${val})
    endif()
  endforeach()
  get_target_property(libs ${target} LINK_LIBRARIES)
  if(libs)
    target_link_libraries(${target}_pic PRIVATE ${libs})
  endif()
endfunction()
