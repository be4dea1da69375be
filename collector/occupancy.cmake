add_library(vtpin_occupancy STATIC ${CMAKE_CURRENT_LIST_DIR}/occupancy.c)
target_include_directories(vtpin_occupancy PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(vtpin_occupancy PUBLIC vtpin_common) # common/hash.h
