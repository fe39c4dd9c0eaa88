// The chat panel: my chats with unread badges, one conversation at a time, and starting a
// direct or group chat (recipients from the contact picker, contacts.js). Message text is only
// ever set as text.

import { describeError, get, idempotencyKey, post } from "./api.js";
import { ContactPicker } from "./contacts.js";
import { byId, h, initial, replaceChildren, setBadge } from "./dom.js";
import { format, timeElement } from "./i18n.js";

export class ChatPanel {
  constructor({ api, me, toasts, onUnreadChange }) {
    this.url = api.chats;
    this.me = me;
    this.toasts = toasts;
    this.onUnreadChange = onUnreadChange;
    this.chats = [];
    this.loaded = false;
    this.openChatId = null;
    this.messages = new Map(); // chat id -> messages, oldest first (kept for this page's life)
    this.readUpTo = new Map(); // chat id -> the last message id we told the server we read
    this.pushedDuringPoll = null; // stream events since the chat list poll in flight began

    this.panel = byId("chat-panel");
    this.button = byId("chat-button");
    this.badge = byId("chat-unread");
    this.list = byId("chat-list");
    this.empty = byId("chat-empty");
    this.messageList = byId("message-list");
    this.messageForm = byId("message-form");
    this.messageInput = byId("message-input");
    this.messageError = byId("message-error");
    this.newForm = byId("new-chat-form");
    this.newMessage = byId("new-chat-message");
    this.newSubmit = byId("new-chat-submit");
    this.newError = byId("new-chat-error");

    this.picker = new ContactPicker({
      url: api.contacts,
      me,
      onChange: (recipients) => this.#recipientsChanged(recipients),
      onSearchError: (error) => {
        if (error) this.#showError(this.newError, error);
        else this.newError.hidden = true;
      },
    });

    this.#wire();
  }

  #wire() {
    this.button.addEventListener("click", () => this.toggle());
    this.panel.querySelectorAll(".chat-close").forEach((b) =>
      b.addEventListener("click", () => this.toggle(false)));
    this.panel.querySelectorAll(".chat-back").forEach((b) =>
      b.addEventListener("click", () => this.showList()));
    byId("chat-new").addEventListener("click", () => this.showNewChat());
    this.list.addEventListener("click", (event) => {
      const item = event.target.closest("[data-chat-id]");
      if (item) this.openChat(item.dataset.chatId);
    });
    this.messageForm.addEventListener("submit", (event) => {
      event.preventDefault();
      this.send();
    });
    this.messageInput.addEventListener("keydown", (event) => {
      // Enter sends, Shift+Enter is a new line; never while an IME is composing (Chinese input).
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.messageForm.requestSubmit();
      }
    });
    this.messageInput.addEventListener("input", () => this.#growComposer());
    this.newForm.addEventListener("submit", (event) => {
      event.preventDefault();
      this.startChat();
    });
    this.newMessage.addEventListener("input", () => { this.newError.hidden = true; });
  }

  get isOpen() {
    return !this.panel.hidden;
  }

  /** True while the person can actually see the open conversation. */
  get #looking() {
    return this.isOpen && this.view === "conversation" && this.openChatId !== null
      && document.visibilityState === "visible";
  }

  toggle(open = this.panel.hidden) {
    const hadFocus = this.panel.contains(document.activeElement);
    this.panel.hidden = !open;
    this.button.setAttribute("aria-expanded", String(open));
    if (open) {
      if (this.view === undefined) this.showList();
      if (this.view === "conversation") this.#markRead(this.openChatId);
    } else if (hadFocus) {
      this.button.focus(); // a keyboard goes on from where the chat was opened
    }
  }

  #show(view) {
    this.view = view;
    this.panel.querySelectorAll(".chat-view").forEach((section) => {
      section.hidden = section.dataset.view !== view;
    });
  }

  showList() {
    this.openChatId = null;
    this.#show("list");
    this.#renderList();
  }

  showNewChat() {
    this.picker.clear();
    this.newMessage.value = "";
    this.newError.hidden = true;
    this.#show("new");
    this.picker.focus();
  }

  /** One poll round: my chats, and new messages of the open one. */
  async poll() {
    // Messages the stream pushes while the list is on its way may be newer than the answer:
    // they are applied again on top of it (receive() counts each message once).
    const pushed = [];
    this.pushedDuringPoll = pushed;
    let answer;
    try {
      // Kept by the service worker: a reload without a network shows the chats it knew.
      answer = await get(this.url, undefined, { keep: this.me.id });
    } finally {
      if (this.pushedDuringPoll === pushed) this.pushedDuringPoll = null;
    }
    this.chats = answer.results;
    this.loaded = true;
    for (const event of pushed) this.receive(event);
    if (this.openChatId !== null) await this.#fetchMessages(this.openChatId);
    this.#renderList();
  }

  /**
   * A message pushed by the event stream. Returns false for a chat this page does not know
   * yet (someone started it): the caller polls to fetch it.
   */
  receive(event) {
    this.pushedDuringPoll?.push(event);
    const { chat: id, message } = event;
    const chat = this.#chat(id);
    if (!chat) return false;
    // Only a conversation already loaded is extended; others are fetched when opened.
    if (this.messages.has(id)) this.#merge(id, [message]);
    const fresh = !chat.last_message || message.id > chat.last_message.id;
    if (fresh) {
      chat.last_message = message;
      if (message.sender.id !== this.me.id) chat.unread += 1;
      this.chats = [chat, ...this.chats.filter((c) => c.id !== id)]; // most recent first
    }
    if (this.openChatId === id) {
      this.#renderMessages();
      if (this.#looking) void this.#markRead(id);
    }
    this.#renderList();
    return true;
  }

  #chat(id) {
    return this.chats.find((c) => c.id === id);
  }

  #others(chat) {
    return chat.members.filter((m) => m.id !== this.me.id);
  }

  #name(chat) {
    const others = this.#others(chat).map((m) => m.username);
    if (others.length === 0) return gettext("Only you");
    return others.join(", ");
  }

  #renderList() {
    const items = this.chats.map((chat) => {
      const last = chat.last_message;
      let preview = "";
      if (last) {
        preview = last.sender.id === this.me.id
          ? format(gettext("You: %(text)s"), { text: last.body })
          : chat.kind === "group" ? `${last.sender.username}: ${last.body}` : last.body;
      }
      const name = this.#name(chat);
      return h("li", {}, h("button", {
        type: "button",
        className: chat.unread > 0 ? "chat-item has-unread" : "chat-item",
        dataset: { chatId: chat.id },
      },
      h("span", { className: chat.kind === "group" ? "avatar avatar-group" : "avatar",
                  "aria-hidden": "true" }, initial(name)),
      h("span", { className: "chat-item-main" },
        h("span", { className: "chat-item-name" }, name),
        h("span", { className: "chat-item-preview" },
          preview || gettext("No messages yet"))),
      h("span", { className: "chat-item-side" },
        last ? timeElement(last.sent_at, "chat-item-time") : null,
        chat.unread > 0
          ? h("span", { className: "badge badge-inline" }, String(chat.unread),
            h("span", { className: "visually-hidden" }, ` ${gettext("unread")}`))
          : null)));
    });
    replaceChildren(this.list, items);
    this.empty.hidden = !this.loaded || items.length > 0;
    const total = this.chats.reduce((sum, chat) => sum + chat.unread, 0);
    setBadge(this.badge, total);
    this.button.setAttribute("aria-label", format(
      ngettext("Chats: %(count)s unread", "Chats: %(count)s unread", total), { count: total }));
    this.onUnreadChange(total);
  }

  async openChat(id) {
    const chat = this.#chat(id);
    if (!chat) return;
    this.openChatId = id;
    this.messageError.hidden = true;
    byId("conversation-title").textContent = this.#name(chat);
    byId("conversation-members").textContent = chat.kind === "group"
      ? chat.members.map((m) => m.username).join(", ")
      : gettext("Direct chat");
    this.#show("conversation");
    this.#renderMessages(true);
    this.messageInput.focus();
    try {
      await this.#fetchMessages(id);
    } catch (error) {
      this.#showError(this.messageError, error);
    }
  }

  async #fetchMessages(id) {
    const known = this.messages.get(id) ?? [];
    const after = known.length ? known[known.length - 1].id : undefined;
    const answer = await get(`${this.url}${encodeURIComponent(id)}/messages/`, { after });
    if (answer.results.length) this.#merge(id, answer.results);
    if (this.openChatId === id) {
      if (answer.results.length) this.#renderMessages();
      if (this.#looking) await this.#markRead(id);
    }
  }

  #merge(id, incoming) {
    const byMessageId = new Map((this.messages.get(id) ?? []).map((m) => [m.id, m]));
    for (const message of incoming) byMessageId.set(message.id, message);
    this.messages.set(id, [...byMessageId.values()].sort((a, b) => a.id - b.id));
  }

  async #markRead(id) {
    const messages = this.messages.get(id) ?? [];
    const chat = this.#chat(id);
    if (!messages.length || !chat) return;
    const last = messages[messages.length - 1].id;
    if ((this.readUpTo.get(id) ?? 0) >= last && chat.unread === 0) return;
    try {
      const answer = await post(`${this.url}${encodeURIComponent(id)}/read/`, { up_to: last });
      this.readUpTo.set(id, last);
      chat.unread = answer.unread;
      this.#renderList();
    } catch {
      // Not critical: the next poll round tries again.
    }
  }

  #renderMessages(forceBottom = false) {
    const list = this.messageList;
    const nearBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 60;
    const chat = this.#chat(this.openChatId);
    const messages = this.messages.get(this.openChatId) ?? [];
    let previousSender = null;
    const items = messages.map((message) => {
      const mine = message.sender.id === this.me.id;
      const showSender = !mine && chat?.kind === "group" && previousSender !== message.sender.id;
      previousSender = message.sender.id;
      return h("li", { className: mine ? "message mine" : "message theirs",
                       dataset: { messageId: String(message.id) } },
        showSender ? h("span", { className: "message-sender" }, message.sender.username) : null,
        h("span", { className: "message-body" }, message.body),
        timeElement(message.sent_at, "message-time"));
    });
    if (!items.length) {
      items.push(h("li", { className: "message-empty muted" },
        gettext("No messages here yet. Say hello.")));
    }
    replaceChildren(list, items);
    if (forceBottom || nearBottom) list.scrollTop = list.scrollHeight;
  }

  async send() {
    const body = this.messageInput.value.trim();
    const id = this.openChatId;
    if (!body || id === null) return;
    this.messageError.hidden = true;
    const button = this.messageForm.querySelector("button[type=submit]");
    button.disabled = true;
    // A retry of the same text into the same chat (its answer was lost) keeps its key, so the
    // server can answer it instead of storing the message twice.
    if (this.unsent?.chat !== id || this.unsent?.body !== body) {
      this.unsent = { chat: id, body, key: idempotencyKey() };
    }
    try {
      const message = await post(`${this.url}${encodeURIComponent(id)}/messages/`, { body },
                                 { "Idempotency-Key": this.unsent.key });
      this.unsent = null;
      this.#merge(id, [message]);
      this.messageInput.value = "";
      this.#growComposer();
      const chat = this.#chat(id);
      if (chat) chat.last_message = message;
      if (this.openChatId === id) this.#renderMessages(true);
      this.#renderList();
    } catch (error) {
      this.#showError(this.messageError, error); // the text stays in the box for another try
    } finally {
      button.disabled = false;
      this.messageInput.focus();
    }
  }

  #growComposer() {
    const input = this.messageInput;
    input.style.height = "auto";
    input.style.height = `${Math.min(input.scrollHeight, 140)}px`;
  }

  #showError(element, error) {
    element.textContent = describeError(error);
    element.hidden = false;
  }

  // --- new chat ---------------------------------------------------------------------------

  #recipientsChanged(recipients) {
    this.newSubmit.disabled = recipients.length === 0;
    this.newSubmit.textContent = recipients.length > 1
      ? gettext("Start group chat") : gettext("Start chat");
  }

  async startChat() {
    const message = this.newMessage.value.trim();
    const members = this.picker.recipients.map((r) => r.id);
    if (!members.length) return;
    if (members.length > 1 && !message) {
      this.newError.textContent = gettext("A group chat starts with a message: write one.");
      this.newError.hidden = false;
      this.newMessage.focus();
      return;
    }
    this.newError.hidden = true;
    this.newSubmit.disabled = true;
    try {
      let chat;
      if (members.length === 1) {
        chat = await post(`${this.url}direct/`, { user: members[0] });
        if (message) {
          const sent = await post(`${this.url}${encodeURIComponent(chat.id)}/messages/`,
                                  { body: message }, { "Idempotency-Key": idempotencyKey() });
          chat.last_message = sent;
          this.#merge(chat.id, [sent]);
        }
      } else {
        chat = await post(this.url, { members, message });
      }
      this.chats = [chat, ...this.chats.filter((c) => c.id !== chat.id)];
      this.picker.clear();
      this.newMessage.value = "";
      await this.openChat(chat.id);
    } catch (error) {
      this.#showError(this.newError, error);
      this.newSubmit.disabled = this.picker.recipients.length === 0;
    }
  }
}
