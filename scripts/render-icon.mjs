// Renders the marketplace icon media/icon.png (256×256) from the activity-bar glyph media/loopx.svg:
// the same strokes, white on the gallery banner's colour. Needs Debian's librsvg2-bin (rsvg-convert).
// Run after changing media/loopx.svg and commit the PNG: `node scripts/render-icon.mjs`.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const background = manifest.galleryBanner.color;
const glyph = readFileSync(join(root, 'media', 'loopx.svg'), 'utf8');
const strokes = /<svg[^>]*>([\s\S]*)<\/svg>/.exec(glyph)?.[1];
if (!strokes) throw new Error('media/loopx.svg: no <svg> element to take the strokes from');

const icon = `<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 24 24">
  <rect width="24" height="24" rx="5" fill="${background}"/>
  <g transform="translate(4 4) scale(0.6667)" fill="none" stroke="#ffffff" stroke-width="2.2"
     stroke-linecap="round" stroke-linejoin="round">${strokes}</g>
</svg>`;
execFileSync('rsvg-convert', ['--format', 'png', '--output', join(root, 'media', 'icon.png')], { input: icon });
console.log('media/icon.png written');
