"""The chat's settings, from the environment (config/app_settings.py)."""

from config.app_settings import env

CHAT_MESSAGE_MAX_LENGTH = env.int("CHAT_MESSAGE_MAX_LENGTH", default=4000)
CHAT_MAX_MEMBERS = env.int("CHAT_MAX_MEMBERS", default=50)  # the creator included
CHAT_MESSAGES_PAGE_SIZE = env.int("CHAT_MESSAGES_PAGE_SIZE", default=50)
CHAT_MESSAGES_MAX_PAGE_SIZE = env.int("CHAT_MESSAGES_MAX_PAGE_SIZE", default=200)
# A pending fetch returns at most this many messages per chat (the rest on the next fetch),
# so one call never builds an unbounded reply.
CHAT_PENDING_MAX_PER_CHAT = env.int("CHAT_PENDING_MAX_PER_CHAT", default=1000)
CHAT_RECENT_CONTACTS = env.int("CHAT_RECENT_CONTACTS", default=100)
CHAT_CONTACTS_LIMIT = env.int("CHAT_CONTACTS_LIMIT", default=20)  # autocomplete results
CHAT_MESSAGE_RETENTION_DAYS = env.int("CHAT_MESSAGE_RETENTION_DAYS", default=30)
CHAT_IDLE_DAYS = env.int("CHAT_IDLE_DAYS", default=90)
# Retention visits this many chats per round trip and removes at most this many messages per
# Redis call, so no call blocks Redis for long.
CHAT_SWEEP_BATCH = env.int("CHAT_SWEEP_BATCH", default=500)
# Beat purges old messages and drops idle chats this often.
CHAT_SWEEP_SECONDS = env.float("CHAT_SWEEP_SECONDS", default=3600.0)
