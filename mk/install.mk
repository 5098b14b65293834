# install and uninstall: filled in with the systemd unit and man pages.
install:
uninstall:
.PHONY: install uninstall
