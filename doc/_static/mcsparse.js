// mcsparse: a display formula wider than the text column is scaled down to
// fit (to 70% at the least); a wider one scrolls inside its box
// (doc/_static/mcsparse.css). MathJax 3 does not break display lines.
(function () {
  "use strict";
  var MIN_SCALE = 0.7;

  function fit() {
    var boxes = document.querySelectorAll('mjx-container[display="true"]');
    for (var i = 0; i < boxes.length; i++) {
      var box = boxes[i];
      var math = box.querySelector("mjx-math");
      if (!math) continue;
      // MathJax sets its own font-size scale on the box: keep it as the base
      if (box.dataset.mcsparseFontSize === undefined) {
        box.dataset.mcsparseFontSize = box.style.fontSize || "100%";
      }
      var base = parseFloat(box.dataset.mcsparseFontSize) || 100;
      box.style.fontSize = base + "%";
      var width = math.getBoundingClientRect().width;
      var room = box.clientWidth;
      if (room > 0 && width > room) {
        var scale = Math.max(MIN_SCALE, (room - 2) / width);
        box.style.fontSize = (base * scale).toFixed(1) + "%";
      }
    }
  }

  function whenTypeset() {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(fit);
    } else if (document.querySelector(".math")) {
      setTimeout(whenTypeset, 100);
    }
  }

  var resizing = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizing);
    resizing = setTimeout(fit, 50);
  });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", whenTypeset);
  } else {
    whenTypeset();
  }
})();
