"""Output shapes of the chat API, exactly as SPEC.md section 3 names them."""

from __future__ import annotations

from datetime import datetime

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from config.timestamps import iso
from messaging.domain import ChatKind


@extend_schema_field(OpenApiTypes.DATETIME)
class MillisecondDateTimeField(serializers.Field):
    """ISO 8601 in UTC with milliseconds and `Z`: `2026-11-21T08:15:02.113Z`."""

    def to_representation(self, value: datetime) -> str:
        return iso(value)


class UserRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class MessageSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="1, 2, 3, ... within the chat, without gaps.")
    chat = serializers.CharField()
    sender = UserRefSerializer()
    body = serializers.CharField()
    sent_at = MillisecondDateTimeField()


class ChatSerializer(serializers.Serializer):
    id = serializers.CharField()
    kind = serializers.ChoiceField(choices=[(k.value, k.value) for k in ChatKind])
    members = UserRefSerializer(many=True)
    unread = serializers.IntegerField(help_text="Messages after the last one you have seen.")
    last_message = MessageSerializer(allow_null=True)


class ChatListSerializer(serializers.Serializer):
    results = ChatSerializer(many=True)


class MessageListSerializer(serializers.Serializer):
    results = MessageSerializer(many=True)


class PendingChatSerializer(serializers.Serializer):
    chat = serializers.CharField()
    messages = MessageSerializer(many=True)


class PendingListSerializer(serializers.Serializer):
    results = PendingChatSerializer(many=True)


class UnreadSerializer(serializers.Serializer):
    unread = serializers.IntegerField()


class ContactListSerializer(serializers.Serializer):
    results = UserRefSerializer(many=True)
