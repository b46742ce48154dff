# The installed library side: `find_package(board 0.1 REQUIRED COMPONENTS reducer)` and
# `pkg-config board-reducer`. Each component installs its own exported-targets file beside
# one shared boardConfig.cmake, so a package that carries some components (Debian's
# libboard-reducer-dev) answers for exactly those. Install component `reducer-dev`.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(BOARD_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/board)

install(TARGETS board_reducer EXPORT board-reducer
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT reducer-dev
  FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT reducer-dev)
install(EXPORT board-reducer NAMESPACE board:: FILE board-reducer-targets.cmake
  DESTINATION ${BOARD_CMAKE_DIR} COMPONENT reducer-dev)

configure_package_config_file(cmake/boardConfig.cmake.in ${PROJECT_BINARY_DIR}/boardConfig.cmake
  INSTALL_DESTINATION ${BOARD_CMAKE_DIR} NO_SET_AND_CHECK_MACRO)
# 0.x: a new minor may break the API, so only the same minor satisfies a request.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/boardConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/boardConfig.cmake ${PROJECT_BINARY_DIR}/boardConfigVersion.cmake
  DESTINATION ${BOARD_CMAKE_DIR} COMPONENT reducer-dev)

# pkg-config has no notion of a language level, so -std=c++20 travels in Cflags: a plain
# `g++ $(pkg-config --cflags --libs board-reducer)` line compiles with any default.
configure_file(cmake/board-reducer.pc.in ${PROJECT_BINARY_DIR}/board-reducer.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/board-reducer.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT reducer-dev)
