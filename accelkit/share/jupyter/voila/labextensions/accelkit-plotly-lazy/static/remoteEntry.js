/* accelkit-plotly-lazy: plotly charts in the app, with plotly.js fetched only when a page shows its first chart.

   jupyterlab-plotly's mime extension is one 4.8 MB script (plotly.js and its renderer), which Voila
   fetches and parses on every page before the first control works, although the app's start tab
   has no chart. `accelkit app` leaves that extension out of the page
   (VoilaConfiguration.extension_denylist) and loads this one instead: a module-federation container
   written by hand (no build step) whose renderer, for the plotly mime type, loads jupyterlab-plotly's
   own container on the first chart and hands each chart to jupyterlab-plotly's own renderer, a child
   of this one. The charts are drawn by the same code as before; only when plotly.js arrives changes.
   It lives in share/jupyter/voila/labextensions, which Voila reads and JupyterLab does not. */
var _JUPYTERLAB;
(function () {
  "use strict";
  var NAME = "accelkit-plotly-lazy";
  var PLOTLY = "jupyterlab-plotly";
  var MIME = "application/vnd.plotly.v1+json";
  var shareScope = null; // the page's module-federation share scope, given to init()
  var plotlyFactory = null; // a promise of jupyterlab-plotly's renderer factory, made on the first chart

  function labextensionsUrl() {
    var el = document.getElementById("jupyter-config-data");
    var url = "";
    try { url = JSON.parse(el.textContent).fullLabextensionsUrl || ""; } catch (e) { /* the default below */ }
    return (url || "/voila/labextensions").replace(/\/+$/, "");
  }

  function loadScript(url) {
    return new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.onload = resolve;
      s.onerror = function () { reject(new Error("could not load " + url)); };
      s.async = true;
      s.src = url;
      document.head.appendChild(s);
    });
  }

  function rendererFactory() {
    if (plotlyFactory === null) {
      var root = labextensionsUrl() + "/" + PLOTLY + "/";
      plotlyFactory = fetch(root + "package.json", { credentials: "same-origin" })
        .then(function (r) {
          if (!r.ok) { throw new Error(PLOTLY + " is not installed on the server (" + r.status + ")"); }
          return r.json();
        })
        .then(function (pkg) {
          var build = pkg.jupyterlab._build;
          return loadScript(root + build.load).then(function () {
            var container = window._JUPYTERLAB[PLOTLY];
            return Promise.resolve(container.init(shareScope)).then(function () {
              return container.get(build.mimeExtension);
            });
          });
        })
        .then(function (factory) {
          var mod = factory();
          var exts = mod && Object.prototype.hasOwnProperty.call(mod, "__esModule") ? mod.default : mod;
          exts = Array.isArray(exts) ? exts : [exts];
          for (var i = 0; i < exts.length; i++) {
            var rf = exts[i] && exts[i].rendererFactory;
            if (rf && rf.mimeTypes.indexOf(MIME) >= 0) { return rf; }
          }
          throw new Error(PLOTLY + " has no renderer for " + MIME);
        });
      plotlyFactory.catch(function () { plotlyFactory = null; }); // a failed load is retried by the next chart
    }
    return plotlyFactory;
  }

  function shared(name) {
    // the newest version of a shared package in the page's share scope, as a module
    var versions = (shareScope && shareScope[name]) || {};
    var keys = Object.keys(versions).sort(function (a, b) {
      var x = a.split(/[.-]/), y = b.split(/[.-]/);
      for (var i = 0; i < Math.max(x.length, y.length); i++) {
        var d = (parseInt(x[i], 10) || 0) - (parseInt(y[i], 10) || 0);
        if (d) { return d; }
      }
      return 0;
    });
    if (!keys.length) { return Promise.reject(new Error(name + " is not shared on this page")); }
    return Promise.resolve(versions[keys[keys.length - 1]].get()).then(function (f) { return f(); });
  }

  function extension(widgets) {
    var Panel = widgets.Panel;

    // a Panel, so that jupyterlab-plotly's renderer is a child widget and gets the attach, show
    // and resize messages it redraws on
    class LazyPlotly extends Panel {
      constructor(options) {
        super();
        this._options = options;
        this._inner = null;
        this.addClass("ak-LazyPlotly");
      }
    }
    LazyPlotly.prototype.renderModel = function (model) {
      var self = this;
      return rendererFactory().then(function (rf) {
        if (self.isDisposed) { return undefined; }
        if (self._inner === null) {
          self._inner = rf.createRenderer(self._options);
          self.addWidget(self._inner);
        }
        return self._inner.renderModel(model);
      }, function (err) {
        var note = document.createElement("div");
        note.className = "ak-error";
        note.textContent = "This chart could not be drawn: " + (err && err.message ? err.message : err) +
          ". Reload the page to try again.";
        self.node.appendChild(note);
        console.error(err);
      });
    };

    return [{
      id: NAME + ":factory",
      rendererFactory: { safe: true, mimeTypes: [MIME], createRenderer: function (o) { return new LazyPlotly(o); } },
      rank: 2,
      dataType: "json"
    }];
  }

  var container = {
    init: function (scope) {
      shareScope = scope;
      return Promise.resolve();
    },
    get: function (module) {
      if (module !== "./mimeExtension") {
        return Promise.reject(new Error('Module "' + module + '" does not exist in container.'));
      }
      return shared("@lumino/widgets").then(function (widgets) {
        var mod = { __esModule: true, default: extension(widgets) };
        return function () { return mod; };
      });
    }
  };
  _JUPYTERLAB = window._JUPYTERLAB = window._JUPYTERLAB || {};
  _JUPYTERLAB[NAME] = container;
})();
