# install-extra.cmake - installs the manual pages and the shell completions.
# Included from the top CMakeLists.txt (after include(GNUInstallDirs)), which
# then no longer installs man/kmsg.5 itself.
#
# The completions go where each shell looks for completions of packages:
# bash-completion loads share/bash-completion/completions/<command> on first
# use, zsh's default fpath has share/zsh/site-functions (with a prefix other
# than /usr or /usr/local, add it to fpath), fish reads
# share/fish/vendor_completions.d.

install(FILES ${CMAKE_CURRENT_LIST_DIR}/../man/kmsg.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/../man/libkmsg.3
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man3)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/../man/kmsg.5
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man5)

install(FILES ${CMAKE_CURRENT_LIST_DIR}/../completions/kmsg.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME kmsg)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/../completions/_kmsg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/../completions/kmsg.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d)
