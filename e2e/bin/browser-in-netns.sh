#!/bin/sh
# Playwright's executablePath for a swarm viewer: Chromium inside the viewer's own network
# namespace (e2e/src/swarm/viewer-networks.ts sets both variables).
exec nsenter --net="$SHOAL_VIEWER_NETNS" "$SHOAL_VIEWER_CHROMIUM" "$@"
