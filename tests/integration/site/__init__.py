"""The built site as people, browsers, feed readers and crawlers read it."""
