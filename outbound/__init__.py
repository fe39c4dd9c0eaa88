"""What the server sends to the outside, shared by every feature that does (push, alert
actions, the outbox): the HTTPS client (`http`), the SSRF guard (`hosts`), the SMTP backend
(`mail`) and the one time limit they keep (`deadline`). It imports nothing of the product."""
