"""Chat endpoints: each validates its input, calls one service or selector, serializes."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config import idempotency
from config.authentication import CsrfOnEveryMethodSessionAuthentication
from config.fields import BoundedListField
from config.users import signed_in
from config.validation import validated
from directory.authentication import CachedTokenAuthentication
from messaging import selectors, services

from .serializers import (
    ChatListSerializer,
    ChatSerializer,
    ContactListSerializer,
    MessageListSerializer,
    MessageSerializer,
    PendingListSerializer,
    UnreadSerializer,
)

# Ids beyond this would overflow the database's integer columns (a 500, not a 400).
MAX_ID = 2**63 - 1


def _user_id_field() -> serializers.IntegerField:
    return serializers.IntegerField(min_value=1, max_value=MAX_ID)


def _body_field() -> serializers.CharField:
    # Whitespace is part of a chat message; blank and over-long bodies are refused by the
    # service, so Python callers get the same rules as the API.
    return serializers.CharField(allow_blank=True, trim_whitespace=False)


class ChatAPIView(APIView):
    """Chat domain errors reach HTTP through config.api.exception_handler: not a member (or no
    such chat) is 404, always; a refused request is 400 naming its field."""


class ChatsView(ChatAPIView):
    class ChatCreateInputSerializer(serializers.Serializer):
        # Capped before the items are validated: a longer list can never be a valid chat.
        members = BoundedListField(
            child=_user_id_field(),
            allow_empty=False,
            max_length=settings.CHAT_MAX_MEMBERS,
            help_text="User ids; you are added yourself.",
        )
        message = _body_field()

    @extend_schema(
        responses=ChatListSerializer,
        operation_id="chats_list",
        summary="My chats, most recent activity first",
    )
    def get(self, request: Request) -> Response:
        chats = selectors.chat_list(user=signed_in(request))
        return Response(ChatListSerializer({"results": chats}).data)

    @extend_schema(
        request=ChatCreateInputSerializer,
        responses={201: ChatSerializer},
        operation_id="chats_create",
        summary="Create a group chat with its first message",
    )
    def post(self, request: Request) -> Response:
        data = validated(self.ChatCreateInputSerializer, request.data)
        chat = services.chat_create_group(
            creator=signed_in(request), member_ids=data["members"], message=data["message"]
        )
        return Response(ChatSerializer(chat).data, status=status.HTTP_201_CREATED)


class DirectChatView(ChatAPIView):
    class DirectChatInputSerializer(serializers.Serializer):
        user = _user_id_field()

    @extend_schema(
        request=DirectChatInputSerializer,
        responses=ChatSerializer,
        operation_id="chats_direct",
        summary="The direct chat with a user (the same one every time)",
    )
    def post(self, request: Request) -> Response:
        data = validated(self.DirectChatInputSerializer, request.data)
        chat = services.chat_open_direct(user=signed_in(request), other_id=data["user"])
        return Response(ChatSerializer(chat).data)


class ChatDetailView(ChatAPIView):
    @extend_schema(
        responses=ChatSerializer, operation_id="chats_retrieve", summary="One of my chats"
    )
    def get(self, request: Request, chat_id: str) -> Response:
        chat = selectors.chat_get(user=signed_in(request), chat_id=chat_id)
        return Response(ChatSerializer(chat).data)


class ChatMessagesView(ChatAPIView):
    class MessagesQuerySerializer(serializers.Serializer):
        after = serializers.IntegerField(
            min_value=0, max_value=MAX_ID, default=0, help_text="Only messages with a higher id."
        )
        limit = serializers.IntegerField(
            min_value=1,
            max_value=settings.CHAT_MESSAGES_MAX_PAGE_SIZE,
            default=settings.CHAT_MESSAGES_PAGE_SIZE,
        )

    class MessageSendInputSerializer(serializers.Serializer):
        body = _body_field()

    @extend_schema(
        parameters=[MessagesQuerySerializer],
        responses=MessageListSerializer,
        operation_id="chats_messages_list",
        summary="Stored messages, oldest first (does not change what is seen)",
    )
    def get(self, request: Request, chat_id: str) -> Response:
        query = validated(self.MessagesQuerySerializer, request.query_params)
        messages = selectors.message_list(
            user=signed_in(request), chat_id=chat_id, after=query["after"], limit=query["limit"]
        )
        return Response(MessageListSerializer({"results": messages}).data)

    @extend_schema(
        request=MessageSendInputSerializer,
        parameters=[idempotency.OPENAPI_HEADER],
        responses={
            201: MessageSerializer,
            422: OpenApiResponse(description="The Idempotency-Key was used for another request."),
        },
        operation_id="chats_messages_create",
        summary="Send a message",
    )
    def post(self, request: Request, chat_id: str) -> Response:
        key = idempotency.key_of(request)
        data = validated(self.MessageSendInputSerializer, request.data)
        message = services.message_send(
            user=signed_in(request), chat_id=chat_id, body=data["body"], idempotency_key=key
        )
        return idempotency.answered(
            MessageSerializer(message).data,
            replayed=message.replayed,
            status=status.HTTP_201_CREATED,
        )


class ChatReadView(ChatAPIView):
    class ChatReadInputSerializer(serializers.Serializer):
        up_to = serializers.IntegerField(min_value=0, max_value=MAX_ID)

    @extend_schema(
        request=ChatReadInputSerializer,
        responses=UnreadSerializer,
        operation_id="chats_read",
        summary="Mark messages seen up to an id",
    )
    def post(self, request: Request, chat_id: str) -> Response:
        data = validated(self.ChatReadInputSerializer, request.data)
        unread = services.chat_mark_read(
            user=signed_in(request), chat_id=chat_id, up_to=data["up_to"]
        )
        return Response(UnreadSerializer({"unread": unread}).data)


class PendingView(ChatAPIView):
    """Fetching pending messages marks them seen, so it changes state: POST is the method.

    GET stays for token clients written against the first version of the API; under session
    authentication it needs the CSRF header like a POST, so a cross-site link cannot trigger it.
    """

    authentication_classes = [CsrfOnEveryMethodSessionAuthentication, CachedTokenAuthentication]

    @extend_schema(
        request=None,
        responses=PendingListSerializer,
        operation_id="chats_pending_fetch",
        summary="Every unseen message in all my chats; marks them seen",
    )
    def post(self, request: Request) -> Response:
        return self._fetch(request)

    @extend_schema(
        responses=PendingListSerializer,
        operation_id="chats_pending",
        summary="The same as POST (kept for token clients; needs CSRF under a session)",
    )
    def get(self, request: Request) -> Response:
        return self._fetch(request)

    @staticmethod
    def _fetch(request: Request) -> Response:
        pending = services.messages_fetch_pending(user=signed_in(request))
        return Response(PendingListSerializer({"results": pending}).data)


class ChatMembersView(ChatAPIView):
    class ChatMemberAddInputSerializer(serializers.Serializer):
        user = _user_id_field()

    @extend_schema(
        request=ChatMemberAddInputSerializer,
        responses=ChatSerializer,
        operation_id="chats_members_add",
        summary="Add a member to a group chat",
    )
    def post(self, request: Request, chat_id: str) -> Response:
        data = validated(self.ChatMemberAddInputSerializer, request.data)
        chat = services.chat_add_member(
            user=signed_in(request), chat_id=chat_id, new_member_id=data["user"]
        )
        return Response(ChatSerializer(chat).data)


class ChatLeaveView(ChatAPIView):
    @extend_schema(
        request=None, responses={204: None}, operation_id="chats_leave", summary="Leave a chat"
    )
    def post(self, request: Request, chat_id: str) -> Response:
        services.chat_leave(user=signed_in(request), chat_id=chat_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ContactsView(ChatAPIView):
    class ContactsQuerySerializer(serializers.Serializer):
        q = serializers.CharField(
            required=False,
            default="",
            allow_blank=True,
            max_length=150,
            help_text="Username prefix (case-insensitive).",
        )

    @extend_schema(
        parameters=[ContactsQuerySerializer],
        responses=ContactListSerializer,
        operation_id="contacts_list",
        summary="Contact autocomplete: recent chat partners first, then others",
    )
    def get(self, request: Request) -> Response:
        query = validated(self.ContactsQuerySerializer, request.query_params)
        contacts = selectors.contact_search(user=signed_in(request), q=query["q"])
        return Response(ContactListSerializer({"results": contacts}).data)
