// Modules the tests import that ship no types (tsconfig.tests.json).
declare module 'bittorrent-tracker/server';
