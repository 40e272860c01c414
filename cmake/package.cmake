# package.cmake - how other builds find an installed libkmsg: a pkg-config
# file (libkmsg.pc) and a CMake package (find_package(kmsg)).  Included from
# the top CMakeLists.txt after the library's targets and GNUInstallDirs.
include(CMakePackageConfigHelpers)

# ---- pkg-config --------------------------------------------------------
# The prefix is the one given at install time (cmake --install --prefix may
# differ from CMAKE_INSTALL_PREFIX at configure time), so the file is made
# in two steps: everything but the prefix now, the prefix when installing.
# Requires.private and Libs.private are what kmsg_static links beyond
# libkmsg itself (target_link_libraries in CMakeLists.txt): zlib, threads.
set(KMSG_PC_PREFIX "@KMSG_PC_PREFIX@")
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(KMSG_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(KMSG_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/libkmsg.pc.in libkmsg.pc.in @ONLY)
install(CODE "
  set(KMSG_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${CMAKE_CURRENT_BINARY_DIR}/libkmsg.pc.in\"
                 \"${CMAKE_CURRENT_BINARY_DIR}/libkmsg.pc\" @ONLY)")
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/libkmsg.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# ---- CMake: find_package(kmsg) -----------------------------------------
set(KMSG_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/kmsg)
install(EXPORT kmsgTargets NAMESPACE kmsg:: DESTINATION ${KMSG_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/kmsgConfig.cmake.in
  kmsgConfig.cmake INSTALL_DESTINATION ${KMSG_CMAKE_DIR})
# 0.x: a minor release may change the interface, so only the same minor
# version is taken as compatible.
write_basic_package_version_file(kmsgConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/kmsgConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/kmsgConfigVersion.cmake
        DESTINATION ${KMSG_CMAKE_DIR})
