// Submits the language switcher as soon as a language is chosen (the form works without it).
"use strict";
document.querySelectorAll("form[data-autosubmit] select").forEach((select) => {
  select.addEventListener("change", () => select.form.submit());
});
