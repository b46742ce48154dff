# board::flags carries the language level, warnings and sanitizers. Every target links it
# PRIVATE, so consumers of our libraries never inherit our warning set.
add_library(board_flags INTERFACE)
add_library(board::flags ALIAS board_flags)
target_compile_features(board_flags INTERFACE cxx_std_20)
target_compile_options(board_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Wold-style-cast -Woverloaded-virtual -Wimplicit-fallthrough)

set(BOARD_SANITIZERS "" CACHE STRING "Comma-separated -fsanitize= list, e.g. address,undefined")
if(BOARD_SANITIZERS)
  set(_board_san -fsanitize=${BOARD_SANITIZERS} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    list(APPEND _board_san -fno-sanitize=function)
  endif()
  target_compile_options(board_flags INTERFACE ${_board_san})
  target_link_options(board_flags INTERFACE ${_board_san})
  # Executables at a fixed address: a sanitized position-independent binary carries a relative
  # relocation for every check's static data, and the loader applies them all at each start.
  # The end-to-end tests start thousands of processes, and that start was most of their time.
  # A project that builds board inside its own keeps its choice (its shared libraries may need
  # ours position-independent).
  if(NOT DEFINED CMAKE_POSITION_INDEPENDENT_CODE)
    include(CheckPIESupported)
    check_pie_supported(LANGUAGES CXX)
    set(CMAKE_POSITION_INDEPENDENT_CODE OFF)
  endif()
endif()

# One test binary per component, registered test case by test case.
# COST: how long the binary's tests take, relative to the rest; ctest -j starts the costliest
# first, so a long test (a minute of retries against a refusing service) is not the tail of a
# run. Without it, tests start in the order they are defined.
function(board_add_tests name)
  cmake_parse_arguments(arg "" "COST" "SOURCES;LIBS" ${ARGN})
  if(NOT arg_COST)
    set(arg_COST 0)
  endif()
  add_executable(${name} ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE ${arg_LIBS} Catch2::Catch2WithMain board::flags)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  # -w NoTests: a name ctest cannot pass back whole (a ";" splits it) fails instead of running
  # nothing and passing.
  catch_discover_tests(${name} TEST_PREFIX "${name}." WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
    EXTRA_ARGS -w NoTests
    PROPERTIES ENVIRONMENT "BOARD_SOURCE_DIR=${PROJECT_SOURCE_DIR}" COST ${arg_COST})
endfunction()

# One component = one folder = one library `board_<name>`, used as `board::<name>`: public
# headers from include/, internal ones from src/, our flags kept private. The flags are a
# build-tree-only link: an installed static library would otherwise name board_flags as a
# dependency its users must find.
function(board_add_component name)
  cmake_parse_arguments(arg "" "" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  add_library(board_${name} ${arg_SOURCES})
  add_library(board::${name} ALIAS board_${name})
  target_include_directories(board_${name}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(board_${name}
    PUBLIC ${arg_PUBLIC} PRIVATE ${arg_PRIVATE} $<BUILD_INTERFACE:board::flags>)
endfunction()

# GCC 12 at -O2 flags Asio's awaitable frames (its own operator new/delete pair) as
# mismatched new/delete: a known false positive with coroutines, not a bug in our code. For
# the targets that compile Asio coroutines; targets that do not exist (tests off) are skipped.
function(board_allow_asio_coroutines)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    return()
  endif()
  foreach(target ${ARGN})
    if(TARGET ${target})
      target_compile_options(${target} PRIVATE -Wno-mismatched-new-delete)
    endif()
  endforeach()
endfunction()
