import { describe, expect, it } from 'vitest';
import { IDEAL_DISTANCE, MAX_POSITION, START_POSITION, positionAtStart, positionBetween, positionBetweenLinks, spread } from '../../src/domain/epic-issues.js';

const link = (id: number, position: number) => ({ id, issueId: id * 10, position });

describe('RelativePositioning of epic issues (GitLab 12)', () => {
  it('puts a new issue 500 before the first, the first one 500 before the middle', () => {
    expect(positionAtStart([])).toBe(START_POSITION - IDEAL_DISTANCE);
    expect(positionAtStart([link(1, 1000), link(2, 3000)])).toBe(500);
  });

  it('takes halfway between two positions, or IDEAL_DISTANCE from an open end', () => {
    expect(positionBetween(100, 200)).toBe(150);
    expect(positionBetween(200, 100)).toBe(150);
    expect(positionBetween(5000, null)).toBe(5500);
    expect(positionBetween(null, 5000)).toBe(4500);
    expect(positionBetween(MAX_POSITION - 10, null)).toBe(MAX_POSITION - 5);
  });

  it('moves after, before or between links, and says when no integer is left', () => {
    const links = [link(1, 100), link(2, 200), link(3, 201)];
    expect(positionBetweenLinks(links, links[0], undefined)).toBe(150);
    expect(positionBetweenLinks(links, undefined, links[0])).toBe(50);
    expect(positionBetweenLinks(links, links[0], links[1])).toBe(150);
    expect(positionBetweenLinks(links, links[1], links[2])).toBeNull();
    expect(positionBetweenLinks(links, links[1], undefined)).toBeNull();
    expect(spread(links).map((l) => l.position)).toEqual([START_POSITION - 500, START_POSITION, START_POSITION + 500]);
  });
});
