# Release artefacts: `make dist` writes into dist/ the tarballs and .debs for amd64,
# arm64 and armv6/armhf, and SHA256SUMS. Every recipe only calls tools: go, nfpm
# (pinned in tools/go.mod, built from the Go module proxy), GNU tar, gzip, sed,
# sha256sum. Two runs from one commit give the same bytes: static, -trimpath, no
# build time, every mtime the commit's (SOURCE_DATE_EPOCH).
#
# VERSION is `git describe --tags` without a leading v (0.3.0, 0.3.0-12-gabcdef); with
# no tag yet, 0.0.0-<commits>-g<hash>. `make dist VERSION=...` overrides it.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DELETE_ON_ERROR:

DIST ?= dist
GO ?= go
# Each is read from git once (:=): a commit made while make runs changes none of them
# half-way through.
ifndef VERSION
VERSION := $(patsubst v%,%,$(or $(shell git describe --tags 2>/dev/null),0.0.0-$(shell git rev-list --count HEAD)-g$(shell git rev-parse --short HEAD)))
endif
ifndef COMMIT
COMMIT := $(shell git rev-parse HEAD)
endif
ifndef SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH := $(shell git log -1 --format=%ct)
endif
export SOURCE_DATE_EPOCH
# The .deb's version: what follows the tag becomes +<commits>.g<hash>, which sorts
# after the tag and before the next one; a pre-release tag's - becomes ~ (0.3.0~rc1
# sorts before 0.3.0). Without a -, dpkg takes the package as native (changelog.gz).
DEB_VERSION := $(shell echo '$(VERSION)' | sed -E 's/-([0-9]+)-(g[0-9a-f]+)$$/+\1.\2/; s/-/~/g')

WORK := $(DIST)/.work
NFPM := $(WORK)/nfpm
LDFLAGS := -s -w -buildid= -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# The archive's architecture names, and each one's GOARCH/GOARM and Debian arch.
ARCHES := amd64 arm64 armv6
goarch_amd64 := amd64
goarch_arm64 := arm64
goarch_armv6 := arm GOARM=6
deb_amd64 := amd64
deb_arm64 := arm64
deb_armv6 := armhf
arch_amd64 := amd64
arch_arm64 := arm64
arch_armhf := armv6

TARBALLS := $(foreach a,$(ARCHES),$(DIST)/scoreboard_$(VERSION)_linux_$(a).tar.gz)
DEBS := $(foreach a,$(ARCHES),$(DIST)/scoreboard_$(VERSION)_$(deb_$(a)).deb)

.PHONY: dist clean debs FORCE
.SECONDARY:
.SECONDEXPANSION:
dist: $(DIST)/SHA256SUMS

debs: $(DEBS)

clean:
	rm -rf $(DIST)

# Rebuilt every time (go's cache makes it quick): the version or the sources may
# have changed where make cannot see.
$(WORK)/%/scoreboard: FORCE
	mkdir -p $(@D)
	CGO_ENABLED=0 GOOS=linux GOARCH=$(goarch_$*) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $@ ./cmd/scoreboard

# Man pages, completions and the changelog, made by a binary for this machine.
$(WORK)/docs.stamp: FORCE
	rm -rf $(WORK)/host $(WORK)/man && mkdir -p $(WORK)/host $(WORK)/man
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(WORK)/host/scoreboard ./cmd/scoreboard
	$(WORK)/host/scoreboard manpage --directory $(WORK)/man
	gzip -9 -n -f $(WORK)/man/*.1
	touch -d @$(SOURCE_DATE_EPOCH) $(WORK)/man/*
	for sh in bash zsh fish; do $(WORK)/host/scoreboard completion $$sh >$(WORK)/scoreboard.$$sh; done
	sed -e 's/@VERSION@/$(DEB_VERSION)/' -e 's/@DESCRIBE@/$(VERSION)/' -e 's/@COMMIT@/$(COMMIT)/' \
		-e "s/@DATE@/$$(date -R -u -d @$(SOURCE_DATE_EPOCH))/" packaging/changelog.in | gzip -9 -n >$(WORK)/changelog.gz
	touch $@

$(NFPM): tools/go.mod tools/go.sum
	mkdir -p $(@D)
	cd tools && CGO_ENABLED=0 $(GO) build -o $(abspath $@) github.com/goreleaser/nfpm/v2/cmd/nfpm

# The tarball: a directory of the binary, the example configs, the units (the daemon's,
# the hub's, the nightly backup's), README and
# copyright, owned by root, sorted, every mtime the commit's, gzip without a name or
# a time.
$(DIST)/scoreboard_$(VERSION)_linux_%.tar.gz: $(WORK)/%/scoreboard $(WORK)/docs.stamp
	d=$(WORK)/tar/scoreboard_$(VERSION)_linux_$*; rm -rf $$d && mkdir -p $$d/man $$d/completions
	cp $(WORK)/$*/scoreboard configs/scoreboard.toml configs/scoreboard.service configs/scoreboard-hub.service configs/league-hub.toml configs/scoreboard-backup.service configs/scoreboard-backup.timer README.md packaging/copyright $(WORK)/tar/scoreboard_$(VERSION)_linux_$*/
	cp $(WORK)/man/* $(WORK)/tar/scoreboard_$(VERSION)_linux_$*/man/
	cp $(WORK)/scoreboard.bash $(WORK)/scoreboard.zsh $(WORK)/scoreboard.fish $(WORK)/tar/scoreboard_$(VERSION)_linux_$*/completions/
	tar --sort=name --mtime=@$(SOURCE_DATE_EPOCH) --owner=0 --group=0 --numeric-owner --mode=u+w,go-w,a+rX \
		--format=gnu -C $(WORK)/tar -cf - scoreboard_$(VERSION)_linux_$* | gzip -9 -n >$@

# One .deb per architecture from packaging/nfpm.yaml.
$(DIST)/scoreboard_$(VERSION)_%.deb: $(NFPM) $(WORK)/docs.stamp $(WORK)/$$(arch_$$*)/scoreboard
	DEB_VERSION='$(DEB_VERSION)' DEB_ARCH=$* BIN=$(WORK)/$(arch_$*)/scoreboard WORK=$(WORK) \
		$(NFPM) package --config packaging/nfpm.yaml --packager deb --target $@

$(DIST)/SHA256SUMS: $(TARBALLS) $(DEBS)
	cd $(DIST) && sha256sum $(notdir $^) >SHA256SUMS

FORCE:
