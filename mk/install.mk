# make install and make uninstall, honouring PREFIX (default /usr/local)
# and DESTDIR (a staging root for packages; empty for a live install).
#
#   $(PREFIX)/sbin/spyremond              the daemon, man page section 8
#   $(PREFIX)/bin/spyremon                the client
#   $(PREFIX)/bin/aiu-smi-sim             the aiu-smi simulator
#   $(PREFIX)/lib/systemd/system/spyremond.service
#   $(PREFIX)/lib/systemd/system/spyremon-metrics.socket, spyremon-metrics@.service
#   $(PREFIX)/lib/systemd/system/spyremon-metrics-textfile.{service,timer}
#   $(PREFIX)/lib/sysusers.d/spyremond.conf
#   $(PREFIX)/lib/tmpfiles.d/spyremond.conf   /var/lib/spyremond before a start
#   $(PREFIX)/share/man/man{1,5,8}/       every page in man/
#   $(PYTHONDIR)/spyremon.py              the Python helper
#   $(PREFIX)/libexec/spyremon/spyremon-{prolog,epilog}   Slurm (contrib/slurm)
#   $(DATADIR)/spyremon/grafana/spyremon.json     the dashboard (contrib/grafana)
#   $(DATADIR)/aiu-smi-sim/torch/*.py             the demo's jobs (contrib/torch)
#   /etc/spyremond/spyremond.yaml         only if absent: never overwritten
#
# systemd looks for units, sysusers.d and tmpfiles.d files under
# /usr/local/lib as well as /usr/lib, so $(PREFIX)/lib serves both usual
# prefixes.  For any other PREFIX, point UNITDIR, SYSUSERSDIR and
# TMPFILESDIR at /usr/local/lib or /etc (for example
# UNITDIR=/etc/systemd/system); Debian 12's packages set
# UNITDIR=/lib/systemd/system.  The config always goes to /etc, because
# that is where spyremond looks by default.  The tmpfiles.d entry makes
# /var/lib/spyremond with the modes the unit's StateDirectory= gives it, so
# that it is there (for group spyremon, and for a package to own) before
# the daemon first starts; the unit makes it too, and /run/spyremond, on
# every start.  Uninstall leaves the config and the database alone.

DESTDIR		?=
BINDIR		?= $(PREFIX)/bin
SBINDIR		?= $(PREFIX)/sbin
MANDIR		?= $(PREFIX)/share/man
UNITDIR		?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR	?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR	?= $(PREFIX)/lib/tmpfiles.d
DATADIR		?= $(PREFIX)/share
LIBEXECDIR	?= $(PREFIX)/libexec/spyremon
CONFDIR		= /etc/spyremond
# where Debian's python3 finds modules: dist-packages under /usr/lib/python3
# for PREFIX=/usr, under /usr/local/lib/python3.X otherwise
PYVER		:= $(shell python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PYTHONDIR	?= $(if $(filter /usr,$(PREFIX)),$(PREFIX)/lib/python3/dist-packages,$(PREFIX)/lib/python$(PYVER)/dist-packages)

INSTALL		?= install

MAN1		= $(wildcard man/*.1)
MAN5		= $(wildcard man/*.5)
MAN8		= $(wildcard man/*.8)
TORCH_JOBS	= fake_trace.py profile_demo.py
TORCH_LIBS	= jobargs.py

# The unit with the daemon's installed path; remade on every install, so a
# new PREFIX always shows.
$(B)/spyremond.service: systemd/spyremond.service FORCE
	@mkdir -p $(dir $@)
	sed 's|@sbindir@|$(SBINDIR)|g' systemd/spyremond.service >$@

# The Prometheus endpoint's units (none enabled by install).
METRICS_UNITS	= spyremon-metrics.socket spyremon-metrics@.service \
		  spyremon-metrics-textfile.service spyremon-metrics-textfile.timer
$(addprefix $(B)/units/, $(METRICS_UNITS)): $(B)/units/%: systemd/% FORCE
	@mkdir -p $(dir $@)
	sed 's|@bindir@|$(BINDIR)|g' $< >$@

install: all $(B)/spyremond.service $(addprefix $(B)/units/, $(METRICS_UNITS))
	$(INSTALL) -D -m 0755 $(B)/spyremond $(DESTDIR)$(SBINDIR)/spyremond
	$(INSTALL) -D -m 0755 $(B)/spyremon $(DESTDIR)$(BINDIR)/spyremon
	$(INSTALL) -D -m 0755 $(B)/aiu-smi-sim $(DESTDIR)$(BINDIR)/aiu-smi-sim
	$(INSTALL) -D -m 0644 $(B)/spyremond.service \
		$(DESTDIR)$(UNITDIR)/spyremond.service
	@set -e; for u in $(METRICS_UNITS); do \
		echo "$(INSTALL) -D -m 0644 $(B)/units/$$u $(DESTDIR)$(UNITDIR)/$$u"; \
		$(INSTALL) -D -m 0644 $(B)/units/$$u $(DESTDIR)$(UNITDIR)/$$u; done
	$(INSTALL) -D -m 0644 systemd/spyremond.sysusers \
		$(DESTDIR)$(SYSUSERSDIR)/spyremond.conf
	$(INSTALL) -D -m 0644 systemd/spyremond.tmpfiles \
		$(DESTDIR)$(TMPFILESDIR)/spyremond.conf
	$(INSTALL) -D -m 0644 contrib/python/spyremon.py \
		$(DESTDIR)$(PYTHONDIR)/spyremon.py
	$(INSTALL) -D -m 0755 contrib/slurm/spyremon-prolog \
		$(DESTDIR)$(LIBEXECDIR)/spyremon-prolog
	$(INSTALL) -D -m 0755 contrib/slurm/spyremon-epilog \
		$(DESTDIR)$(LIBEXECDIR)/spyremon-epilog
	$(INSTALL) -D -m 0644 contrib/grafana/spyremon.json \
		$(DESTDIR)$(DATADIR)/spyremon/grafana/spyremon.json
	$(INSTALL) -D -m 0644 conf/sim.yaml $(DESTDIR)$(DATADIR)/aiu-smi-sim/spyremond.yaml
	@set -e; for f in $(TORCH_JOBS); do \
		echo "$(INSTALL) -D -m 0755 contrib/torch/$$f $(DESTDIR)$(DATADIR)/aiu-smi-sim/torch/$$f"; \
		$(INSTALL) -D -m 0755 contrib/torch/$$f $(DESTDIR)$(DATADIR)/aiu-smi-sim/torch/$$f; done
	@set -e; for f in $(TORCH_LIBS); do \
		echo "$(INSTALL) -D -m 0644 contrib/torch/$$f $(DESTDIR)$(DATADIR)/aiu-smi-sim/torch/$$f"; \
		$(INSTALL) -D -m 0644 contrib/torch/$$f $(DESTDIR)$(DATADIR)/aiu-smi-sim/torch/$$f; done
	@set -e; for p in $(MAN1); do \
		echo "$(INSTALL) -D -m 0644 $$p $(DESTDIR)$(MANDIR)/man1/$${p##*/}"; \
		$(INSTALL) -D -m 0644 $$p $(DESTDIR)$(MANDIR)/man1/$${p##*/}; done
	@set -e; for p in $(MAN5); do \
		echo "$(INSTALL) -D -m 0644 $$p $(DESTDIR)$(MANDIR)/man5/$${p##*/}"; \
		$(INSTALL) -D -m 0644 $$p $(DESTDIR)$(MANDIR)/man5/$${p##*/}; done
	@set -e; for p in $(MAN8); do \
		echo "$(INSTALL) -D -m 0644 $$p $(DESTDIR)$(MANDIR)/man8/$${p##*/}"; \
		$(INSTALL) -D -m 0644 $$p $(DESTDIR)$(MANDIR)/man8/$${p##*/}; done
	@if [ ! -f conf/spyremond.yaml ]; then \
		echo "install: no conf/spyremond.yaml; spyremond will use built-in defaults"; \
	elif [ -e $(DESTDIR)$(CONFDIR)/spyremond.yaml ]; then \
		echo "install: keeping the existing $(DESTDIR)$(CONFDIR)/spyremond.yaml"; \
	else \
		echo "$(INSTALL) -D -m 0644 conf/spyremond.yaml $(DESTDIR)$(CONFDIR)/spyremond.yaml"; \
		$(INSTALL) -D -m 0644 conf/spyremond.yaml $(DESTDIR)$(CONFDIR)/spyremond.yaml; \
	fi
	@if [ -z "$(DESTDIR)" ]; then \
		echo "install: now run: systemd-sysusers $(SYSUSERSDIR)/spyremond.conf &&" \
		    "systemd-tmpfiles --create $(TMPFILESDIR)/spyremond.conf &&" \
		    "systemctl daemon-reload && systemctl enable --now spyremond"; \
	fi

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/spyremond $(DESTDIR)$(BINDIR)/spyremon \
		$(DESTDIR)$(BINDIR)/aiu-smi-sim \
		$(DESTDIR)$(UNITDIR)/spyremond.service \
		$(addprefix $(DESTDIR)$(UNITDIR)/, $(METRICS_UNITS)) \
		$(DESTDIR)$(SYSUSERSDIR)/spyremond.conf \
		$(DESTDIR)$(TMPFILESDIR)/spyremond.conf \
		$(DESTDIR)$(PYTHONDIR)/spyremon.py \
		$(DESTDIR)$(LIBEXECDIR)/spyremon-prolog \
		$(DESTDIR)$(LIBEXECDIR)/spyremon-epilog \
		$(DESTDIR)$(DATADIR)/spyremon/grafana/spyremon.json \
		$(DESTDIR)$(DATADIR)/aiu-smi-sim/spyremond.yaml \
		$(addprefix $(DESTDIR)$(DATADIR)/aiu-smi-sim/torch/, $(TORCH_JOBS) $(TORCH_LIBS))
	@rmdir $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(DATADIR)/spyremon/grafana \
		$(DESTDIR)$(DATADIR)/spyremon $(DESTDIR)$(DATADIR)/aiu-smi-sim/torch \
		$(DESTDIR)$(DATADIR)/aiu-smi-sim 2>/dev/null || true
	@set -e; for p in $(MAN1) $(MAN5) $(MAN8); do \
		f=$(DESTDIR)$(MANDIR)/man$${p##*.}/$${p##*/}; \
		echo "rm -f $$f"; rm -f "$$f"; done
	@echo "uninstall: kept $(DESTDIR)$(CONFDIR) and the database in /var/lib/spyremond"

FORCE:

.PHONY: install uninstall FORCE
