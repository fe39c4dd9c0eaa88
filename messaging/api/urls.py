"""Chat URLs, mounted under /api/v1/ with every app's API (config/urls.py)."""

from django.urls import path

from . import views

app_name = "messaging"

urlpatterns = [
    path("chats/", views.ChatsView.as_view(), name="chats"),
    # Fixed names before <chat_id>/: chat ids never take these forms (see messaging.keys).
    path("chats/direct/", views.DirectChatView.as_view(), name="chat-direct"),
    path("chats/pending/", views.PendingView.as_view(), name="chat-pending"),
    path("chats/<str:chat_id>/", views.ChatDetailView.as_view(), name="chat-detail"),
    path("chats/<str:chat_id>/messages/", views.ChatMessagesView.as_view(), name="chat-messages"),
    path("chats/<str:chat_id>/read/", views.ChatReadView.as_view(), name="chat-read"),
    path("chats/<str:chat_id>/members/", views.ChatMembersView.as_view(), name="chat-members"),
    path("chats/<str:chat_id>/leave/", views.ChatLeaveView.as_view(), name="chat-leave"),
    path("contacts/", views.ContactsView.as_view(), name="contacts"),
]
