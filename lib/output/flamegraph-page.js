/* proff's flame graph page (lib/output/flamegraph-page.js, embedded by
 * lib/output/flamegraph-page.c; docs/flamegraph.md). Reads the JSON in
 * <script id="proff-data">, draws the chosen view as SVG (one <g> per frame
 * with FlameGraph's <title>), and offers zoom, search, flame or icicle,
 * caller or callee order, function or function+srcline frames and, for a
 * diff, the width's side and the colour's measure. Makes no request. */
(function () {
	'use strict';
	var D = JSON.parse(document.getElementById('proff-data').textContent);
	var diff = D.kind === 'diff';
	var NS = 'http://www.w3.org/2000/svg';
	var FRAME = 16, PAD_TOP = 4, PAD_BOTTOM = 4, CHAR = 12 * 0.59;
	var st = { key: 'function', order: 'caller', icicle: false, width: 'max', colour: 'total', zoom: 0, re: null };
	var V, W, X, maxDelta = 0;

	function el(tag, attrs, text) {
		var e = document.createElement(tag);
		for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
		if (text !== undefined) e.textContent = text;
		return e;
	}
	function esc(s) {
		return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
	}
	function commas(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
	/* printf's "%.2f": toFixed, but an exact tie rounds to even as C does */
	function fix2(x) {
		var m = /^(-?\d+)\.(\d)(\d)5(0+)$/.exec(x.toFixed(20));
		if (m && (+m[3]) % 2 === 0) return m[1] + '.' + m[2] + m[3];
		return x.toFixed(2);
	}
	function share(side, v) { return D.sides[side].total ? v / D.sides[side].total : 0; }
	function last() { return D.sides.length - 1; }
	function name(i) { return D.names[V.name[i]]; }
	function srcline(i) { return V.srcline && V.srcline[i] ? D.names[V.srcline[i]] : ''; }
	function fullname(i) { var s = srcline(i); return s ? name(i) + ' ' + s : name(i); }
	function deltaPP(i, self) {
		var a = self ? V.self : V.total;
		return 100 * (share(1, a[1][i]) - share(0, a[0][i]));
	}
	function sigOf(i, self) {
		var s = self ? V.sig_self : V.sig_total;
		if (!s || s.significant[i] === null) return null;
		return { significant: s.significant[i] === 1, p: s.p[i], q: s.q[i], lo: s.lo[i], hi: s.hi[i] };
	}

	/* FlameGraph's title: NAME (N samples, P%) and a diff's "; +D%" */
	function title(i) {
		var side = last(), n = commas(V.total[side][i]);
		if (V.parent[i] < 0) return 'all (' + n + ' ' + D.unit + ', 100%)';
		var pct = 100 * share(side, V.total[side][i]);
		var t = fullname(i) + ' (' + n + ' ' + D.unit + ', ' + fix2(pct) + '%';
		if (!diff) return t + ')';
		var d = pct - 100 * share(0, V.total[0][i]);
		return t + '; ' + (d > 0 ? '+' : '') + fix2(d) + '%)';
	}

	/* widths as shares of the total: a diff's larger side makes room for
	 * both shapes (a frame at least as wide as its children need) */
	function layout() {
		var n = V.frames, i, s;
		W = new Float64Array(n);
		var acc = new Float64Array(n);
		for (i = n - 1; i >= 0; i--) {
			var w;
			if (!diff) w = share(0, V.total[0][i]);
			else if (st.width === 'base') w = share(0, V.total[0][i]);
			else if (st.width === 'new') w = share(1, V.total[1][i]);
			else if (st.width === 'sum') w = share(0, V.total[0][i]) + share(1, V.total[1][i]);
			else {
				var mine = 0, self = 0;
				for (s = 0; s < 2; s++) {
					mine = Math.max(mine, share(s, V.total[s][i]));
					self = Math.max(self, share(s, V.self[s][i]));
				}
				w = Math.max(mine, self + acc[i]);
			}
			W[i] = w;
			if (V.parent[i] >= 0) acc[V.parent[i]] += w;
		}
		X = new Float64Array(n);
		var next = new Float64Array(n);
		for (i = 0; i < n; i++) {
			var p = V.parent[i];
			if (p >= 0) { X[i] = next[p]; next[p] += W[i]; }
			next[i] = X[i];
		}
		maxDelta = 0;
		if (diff)
			for (i = 1; i < n; i++) {
				var sg = sigOf(i, st.colour === 'self');
				if (!sg || sg.significant) maxDelta = Math.max(maxDelta, Math.abs(deltaPP(i, st.colour === 'self')));
			}
	}

	function hot(nm) {
		var h = 2166136261;
		for (var k = 0; k < nm.length; k++) { h ^= nm.charCodeAt(k); h = Math.imul(h, 16777619) >>> 0; }
		var v1 = (h & 0xff) / 255, v2 = ((h >>> 8) & 0xff) / 255, v3 = ((h >>> 16) & 0xff) / 255;
		return 'rgb(' + (205 + Math.floor(50 * v3)) + ',' + Math.floor(230 * v1) + ',' + Math.floor(55 * v2) + ')';
	}
	function colour(i) {
		if (V.merged[i]) return 'rgb(190,190,170)';
		if (!diff) return hot(name(i));
		var self = st.colour === 'self', sg = sigOf(i, self), d = deltaPP(i, self);
		if (sg && !sg.significant) return 'rgb(200,200,200)';
		var x = maxDelta > 0 ? Math.min(Math.abs(d) / maxDelta, 1) : 0, c = Math.floor(210 * (1 - x));
		if (d > 0) return 'rgb(255,' + c + ',' + c + ')';
		if (d < 0) return 'rgb(' + c + ',' + c + ',255)';
		return 'rgb(255,255,255)';
	}

	/* the frames of the zoomed frame's subtree (contiguous: parents first)
	 * and its ancestors */
	function subtreeEnd(z) {
		var d = depth(z), e = z + 1;
		while (e < V.frames && depth(e) > d) e++;
		return e;
	}
	var depthCache;
	function depth(i) { return depthCache[i]; }
	function computeDepths() {
		depthCache = new Int32Array(V.frames);
		for (var i = 1; i < V.frames; i++) depthCache[i] = depthCache[V.parent[i]] + 1;
	}

	var svg, chart, details, tip, matched, search, note;
	function render() {
		var z = st.zoom, width = Math.max(200, chart.clientWidth - 2);
		var end = subtreeEnd(z), dz = depth(z), maxd = dz, i;
		for (i = z; i < end; i++) if (depth(i) > maxd) maxd = depth(i);
		var height = (maxd + 1) * FRAME + PAD_TOP + PAD_BOTTOM;
		var scale = W[z] > 0 ? width / W[z] : 0, x0 = X[z];
		var parts = [];
		function frame(i, x, w, cls) {
			var d = depth(i);
			var y = st.icicle ? PAD_TOP + d * FRAME : height - PAD_BOTTOM - (d + 1) * FRAME;
			var chars = Math.floor((w - 3) / CHAR), label = '', nm = name(i);
			if (chars >= 3) label = chars < nm.length ? nm.substring(0, chars - 2) + '..' : nm;
			if (diff && !V.total[1][i] && !V.count[1][i]) cls += ' only0';
			else if (diff && !V.total[0][i] && !V.count[0][i]) cls += ' only1';
			if (st.re && st.re.test(fullname(i))) cls += ' m';
			parts.push('<g class="' + cls + '" data-i="' + i + '"><title>' + esc(title(i)) + '</title><rect x="' +
				x.toFixed(2) + '" y="' + y + '" width="' + w.toFixed(2) + '" height="' + (FRAME - 1) +
				'" rx="2" ry="2" fill="' + colour(i) + '"/><text x="' + (x + 3).toFixed(2) + '" y="' + (y + 11.5) +
				'">' + esc(label) + '</text></g>');
		}
		for (var a = V.parent[z]; a >= 0; a = V.parent[a]) frame(a, 0, width, 'f anc');
		for (i = z; i < end; i++) frame(i, (X[i] - x0) * scale, W[i] * scale, 'f');
		svg.setAttribute('width', width);
		svg.setAttribute('height', height);
		svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
		svg.innerHTML = parts.join('');
		document.getElementById('reset').disabled = z === 0;
		showMatched();
	}

	/* the share of the total the search matched, nested matches once */
	function showMatched() {
		if (!st.re) { matched.textContent = ''; return; }
		var sum = 0, covered = -1, i;
		for (i = 0; i < V.frames; i++) {
			if (covered >= 0 && i < covered) continue;
			if (i > 0 && st.re.test(fullname(i))) { sum += W[i]; covered = subtreeEnd(i); }
		}
		var pct = W[0] > 0 ? 100 * sum / W[0] : 0;
		matched.textContent = 'Matched: ' + (pct === 100 ? '100' : pct.toFixed(1)) + '%';
	}

	function fmtNs(ns) {
		var u = ['ns', 'us', 'ms', 's'], k = 0;
		while (ns >= 1000 && k < 3) { ns /= 1000; k++; }
		return (k ? ns.toFixed(3) : String(ns)) + ' ' + u[k];
	}
	function tipHtml(i) {
		var rows = [], s;
		var pct = function (side, v) { return fix2(100 * share(side, v)) + '%'; };
		var cnt = D.exact ? 'calls' : 'samples';
		var cntOf = function (side) { return D.exact ? V.self_count[side][i] : V.count[side][i]; };
		var per = function (side, v) { return D.exact ? fmtNs(v) : commas(v); };
		var h = '<div class="n">' + esc(name(i)) + '</div>';
		if (srcline(i)) h += '<div>' + esc(srcline(i)) + '</div>';
		if (V.merged[i]) h += '<div>' + V.merged[i] + ' frames below ' + D.min_width + '% of the total, merged</div>';
		if (!diff) {
			rows.push([cnt, commas(cntOf(0))]);
			rows.push([D.exact ? 'time' : 'period', per(0, V.total[0][i])]);
			rows.push(['Children', pct(0, V.total[0][i])]);
			rows.push(['Self', pct(0, V.self[0][i]) + ' (' + per(0, V.self[0][i]) + ')']);
		} else {
			rows.push(['', 'baseline', 'new', 'delta']);
			rows.push([cnt, commas(cntOf(0)), commas(cntOf(1)), '']);
			rows.push([D.exact ? 'time' : 'period', per(0, V.total[0][i]), per(1, V.total[1][i]), '']);
			rows.push(['Children', pct(0, V.total[0][i]), pct(1, V.total[1][i]), (deltaPP(i, false) > 0 ? '+' : '') + fix2(deltaPP(i, false)) + ' pp']);
			rows.push(['Self', pct(0, V.self[0][i]), pct(1, V.self[1][i]), (deltaPP(i, true) > 0 ? '+' : '') + fix2(deltaPP(i, true)) + ' pp']);
			[false, true].forEach(function (self) {
				var sg = sigOf(i, self), what = self ? 'Self' : 'Children';
				if (!sg) { rows.push([what + ' test', 'not made']); return; }
				/* groups of runs with --metric absolute: the CI is of the period */
				rows.push([what + ' CI', '[' + fix2(sg.lo) + ', ' + fix2(sg.hi) + ']' +
					   (D.stats && D.stats.metric === 'absolute' ? '' : ' pp')]);
				rows.push([what + ' p, q', (sg.p === null ? '-' : sg.p.toPrecision(3)) + ', ' + (sg.q === null ? '-' : sg.q.toPrecision(3))]);
				rows.push(['', sg.significant ? 'significant' : 'not significant']);
			});
		}
		h += '<table>';
		for (s = 0; s < rows.length; s++) h += '<tr><td>' + rows[s].map(esc).join('</td><td>') + '</td></tr>';
		return h + '</table>';
	}

	function frameOf(ev) {
		var g = ev.target.closest ? ev.target.closest('g.f') : null;
		return g ? +g.getAttribute('data-i') : -1;
	}

	function pick() {
		V = null;
		for (var k = 0; k < D.views.length; k++)
			if (D.views[k].key === st.key && D.views[k].order === st.order) V = D.views[k];
		if (!V) { st.key = 'function'; return pick(); }
		V.frames = V.parent.length;
		computeDepths();
		st.zoom = 0;
		layout();
	}

	function select(id, label, options, onchange, disabled) {
		var l = el('label', {}, label + ' '), s = el('select', { id: id });
		options.forEach(function (o) { s.appendChild(el('option', { value: o[0] }, o[1])); });
		s.disabled = !!disabled;
		s.addEventListener('change', function () { onchange(s.value); });
		l.appendChild(s);
		return l;
	}

	function build() {
		var bar = el('div', { id: 'bar' });
		bar.appendChild(el('h1', { id: 'title' }, D.title));
		var reset = el('button', { id: 'reset' }, 'Reset zoom');
		reset.addEventListener('click', function () { st.zoom = 0; render(); });
		bar.appendChild(reset);
		bar.appendChild(select('layout', 'Layout', [['flame', 'flame'], ['icicle', 'icicle']],
			function (v) { st.icicle = v === 'icicle'; render(); }));
		bar.appendChild(select('order', 'Order', [['caller', 'caller (callers at the base)'], ['callee', 'callee (inverted)']],
			function (v) { st.order = v; pick(); render(); }));
		var hasSrc = D.views.some(function (v) { return v.key === 'srcline'; });
		bar.appendChild(select('key', 'Frames', [['function', 'by function'], ['srcline', 'by function + srcline']],
			function (v) { st.key = v; pick(); render(); }, !hasSrc));
		if (diff) {
			bar.appendChild(select('width', 'Width', [['max', 'larger side'], ['base', 'baseline'], ['new', 'new'], ['sum', 'both']],
				function (v) { st.width = v; layout(); render(); }));
			bar.appendChild(select('colour', 'Colour by', [['total', 'inclusive delta'], ['self', 'self delta']],
				function (v) { st.colour = v; layout(); render(); }));
		}
		search = el('input', { id: 'search', type: 'search', placeholder: 'search (regex)' });
		search.addEventListener('input', function () {
			search.classList.remove('bad');
			st.re = null;
			if (search.value) {
				try { st.re = new RegExp(search.value); } catch (e) { search.classList.add('bad'); }
			}
			render();
		});
		bar.appendChild(search);
		matched = el('span', { id: 'matched' });
		bar.appendChild(matched);
		document.body.appendChild(bar);
		var sides = D.sides.map(function (s) {
			return s.file + ' (' + commas(s.samples) + (D.exact ? ' calls, ' : ' samples, ') +
				(D.exact ? fmtNs(s.total) : commas(s.total) + ' period') + ')';
		});
		var txt = (D.event ? D.event + ': ' : '') + sides.join(' \u2192 ');
		if (D.min_width > 0) txt += '; frames below ' + D.min_width + '% merged';
		if (!hasSrc) txt += '; frames by function (--flamegraph-srcline adds their source lines)';
		if (diff && !D.views[0].sig_total) txt += '; no significance test made: every change is coloured';
		note = el('div', { id: 'note' }, txt);
		document.body.appendChild(note);
		if (diff) {
			var lg = el('div', { id: 'legend' });
			lg.innerHTML = '<span style="background:rgb(255,60,60)"></span>grew' +
				'<span style="background:rgb(60,60,255)"></span>shrank' +
				'<span style="background:rgb(200,200,200)"></span>not significant' +
				'<span style="border:1px dashed rgb(0,0,160)"></span>only in the baseline' +
				'<span style="border:1px dashed rgb(160,0,0)"></span>only in the new profile';
			document.body.appendChild(lg);
		}
		chart = el('div', { id: 'chart' });
		svg = document.createElementNS(NS, 'svg');
		svg.setAttribute('id', 'fg');
		chart.appendChild(svg);
		document.body.appendChild(chart);
		details = el('div', { id: 'details' }, ' ');
		document.body.appendChild(details);
		tip = el('div', { id: 'tip' });
		document.body.appendChild(tip);

		svg.addEventListener('click', function (ev) {
			var i = frameOf(ev);
			if (i >= 0) { st.zoom = i; render(); }
		});
		svg.addEventListener('mouseover', function (ev) {
			var i = frameOf(ev);
			if (i < 0) return;
			details.textContent = 'Function: ' + title(i);
			tip.innerHTML = tipHtml(i);
			tip.style.display = 'block';
		});
		svg.addEventListener('mousemove', function (ev) {
			var x = ev.clientX + 14, y = ev.clientY + 14;
			if (x + tip.offsetWidth > window.innerWidth) x = Math.max(0, ev.clientX - tip.offsetWidth - 14);
			if (y + tip.offsetHeight > window.innerHeight) y = Math.max(0, ev.clientY - tip.offsetHeight - 14);
			tip.style.left = x + 'px';
			tip.style.top = y + 'px';
		});
		svg.addEventListener('mouseout', function () { tip.style.display = 'none'; details.textContent = ' '; });
		window.addEventListener('resize', render);
	}

	build();
	pick();
	render();
	window.proffFlame = { data: D, state: st, render: render, title: title };
})();
