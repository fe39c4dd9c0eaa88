"""Chat: group and direct chats whose data lives only in Redis (see docs/guide/chat.md)."""
