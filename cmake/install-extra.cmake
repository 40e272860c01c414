# install-extra.cmake - installs the manual pages and the shell completions.
# Included from the top CMakeLists.txt (after include(GNUInstallDirs)).
#
# The pages go to share/man/man{1,3,5}: with the prefix /usr/local that is
# /usr/local/share/man, which man-db searches for every command found in
# /usr/local/bin (Debian's /etc/manpath.config).
#
# The completions go where each shell looks for them:
# - bash-completion loads share/bash-completion/completions/<command> on
#   first use, from each directory in XDG_DATA_DIRS, which defaults to
#   /usr/local/share:/usr/share;
# - zsh's default fpath on Debian has /usr/local/share/zsh/site-functions
#   and /usr/share/zsh/vendor-completions (with another prefix, add the
#   directory to fpath);
# - fish reads share/fish/vendor_completions.d only of the directories in
#   XDG_DATA_DIRS, and of /usr/share when that is unset, as it is in a
#   console or an ssh login: with the prefix /usr/local the file goes to
#   /etc/fish/completions, the directory fish keeps for the system's own
#   administrator.  KMSG_FISH_COMPLETIONS_DIR chooses another.

# The pages' footers name the version: "kmsg @PROJECT_VERSION@" in the
# sources, the project's version in what is installed (its one home is
# project() in the top CMakeLists.txt).
foreach(page kmsg.1 libkmsg.3 kmsg.5)
  string(REGEX REPLACE ".*\\.([0-9])$" "\\1" section ${page})
  configure_file(${CMAKE_CURRENT_LIST_DIR}/../man/${page}
                 ${CMAKE_BINARY_DIR}/man/${page} @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/man/${page}
          DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endforeach()

install(FILES ${CMAKE_CURRENT_LIST_DIR}/../completions/kmsg.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME kmsg)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/../completions/_kmsg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)

set(KMSG_FISH_COMPLETIONS_DIR "" CACHE PATH
    "where kmsg.fish is installed (relative: under the prefix; empty: chosen by the prefix)")
if(KMSG_FISH_COMPLETIONS_DIR)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/../completions/kmsg.fish
          DESTINATION ${KMSG_FISH_COMPLETIONS_DIR})
else()
  # Chosen by the prefix the install runs with, which `cmake --install
  # --prefix DIR` may change after configuring: an install into DIR must
  # not write to /etc.  file(INSTALL) adds $DESTDIR as install() does.
  install(CODE "
    if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr/local\")
      set(kmsg_fish_dir /etc/fish/completions)
    else()
      set(kmsg_fish_dir \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d\")
    endif()
    file(INSTALL DESTINATION \"\${kmsg_fish_dir}\" TYPE FILE
         FILES \"${CMAKE_CURRENT_LIST_DIR}/../completions/kmsg.fish\")")
endif()

# systemd units: lib/systemd/system under the prefix, which systemd searches
# for /usr/local as for /usr (systemd.unit(5)); KMSG_SYSTEMD_UNIT_DIR
# chooses another.  The service names the installed kmsg by its full path.
set(KMSG_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE PATH
    "where the systemd units are installed (relative: under the prefix)")
set(KMSG_BINDIR ${CMAKE_INSTALL_FULL_BINDIR})
configure_file(${CMAKE_CURRENT_LIST_DIR}/../systemd/kmsg-dump.service.in
               ${CMAKE_BINARY_DIR}/systemd/kmsg-dump.service @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/../systemd/kmsg-listen.service.in
               ${CMAKE_BINARY_DIR}/systemd/kmsg-listen.service @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/../systemd/kmsg-kernel.service.in
               ${CMAKE_BINARY_DIR}/systemd/kmsg-kernel.service @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/../systemd/kmsg-ship@.service.in
               ${CMAKE_BINARY_DIR}/systemd/kmsg-ship@.service @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/systemd/kmsg-ship@.service
        DESTINATION ${KMSG_SYSTEMD_UNIT_DIR})
install(FILES ${CMAKE_BINARY_DIR}/systemd/kmsg-dump.service
              ${CMAKE_CURRENT_LIST_DIR}/../systemd/kmsg-dump.timer
              ${CMAKE_BINARY_DIR}/systemd/kmsg-listen.service
              ${CMAKE_CURRENT_LIST_DIR}/../systemd/kmsg-listen.socket
              ${CMAKE_BINARY_DIR}/systemd/kmsg-kernel.service
        DESTINATION ${KMSG_SYSTEMD_UNIT_DIR})
