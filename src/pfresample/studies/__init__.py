"""One package per source document. Each knows its document; nothing else
knows it."""
