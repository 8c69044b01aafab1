#!/bin/sh
# The executablePath a swarm viewer's browser is launched with (Chromium by Playwright, Firefox by
# puppeteer-core): the browser inside the viewer's own network namespace
# (e2e/src/swarm/viewer-networks.ts sets both variables).
exec nsenter --net="$SHOAL_VIEWER_NETNS" "$SHOAL_VIEWER_BROWSER" "$@"
